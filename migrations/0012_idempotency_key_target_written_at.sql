-- A stored request target (0011) counts only when it was written with the
-- answer it belongs to. A release before 0011 that reuses an expired key
-- overwrites the answer, the body's fingerprint and created_at, but not
-- request_target: the row then pairs the old request's target with the new
-- request's answer, and a retry of the new request would be refused (or
-- another request with the old target replayed). Each store now sets
-- target_written_at to the created_at it writes; a row whose two differ
-- was overwritten by an older release, and its target is not read (the key
-- is judged by its body, as that release judged it). A row stored before
-- this migration has none and is judged the same way; 0011 and this one
-- come in the same release. Nullable, with no default: adding it rewrites
-- nothing.
SET LOCAL lock_timeout = '5s';
ALTER TABLE idempotency_keys ADD COLUMN target_written_at timestamptz;
