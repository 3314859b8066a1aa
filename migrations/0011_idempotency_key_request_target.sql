-- A stored Idempotency-Key remembers which request it answered: the operation
-- and its path parameters (canonical JSON). Before, a key was matched by the
-- body alone, so the same key and body sent to another operation, or to the
-- same operation under another parent, were answered with the first
-- request's stored answer. Nullable, with no default: rows written before
-- this migration, or by an instance not yet upgraded, hold NULL and are
-- judged by the body alone as before, so a retry that crosses a rolling
-- upgrade in either direction is still replayed.
SET LOCAL lock_timeout = '5s';
ALTER TABLE idempotency_keys ADD COLUMN request_target text;
