-- Keys gain scopes, an expiry, rotation and their last use. Every change is
-- additive, so the release before this one runs unchanged on the new schema
-- during a rolling deploy: its INSERTs name none of the new columns and get
-- NULL, which means what it always meant (every scope, no expiry, never
-- rotated). The table holds one row per key ever issued (hundreds), so the
-- statements below hold their locks for milliseconds; lock_timeout makes the
-- migration give up rather than queue behind a long transaction while every
-- key look-up queues behind it.
SET LOCAL lock_timeout = '5s';

-- The scopes the key was restricted to (names from openapi.yaml's security
-- requirements); NULL: unrestricted, every scope the spec declares.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS scopes text[];
-- After this instant the key is refused (401 invalid_token); NULL: never.
-- A rotation sets it on the replaced key to the end of the overlap.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS expires_at timestamptz;
-- When a request last used the key, written in batches (at most a minute late).
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS last_used_at timestamptz;
-- When a rotation issued the key that replaced this one under the same name.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS replaced_at timestamptz;

-- A rotation keeps the name: during the overlap two rows share it, the old
-- one replaced. A name stays unique among keys not replaced, revoked ones
-- included, as before. The index is built before the constraint goes, so no
-- instant lacks the rule; the previous release's duplicate-name check (its
-- INSERT's unique violation, 23505) still fires. Built without CONCURRENTLY:
-- migrations run in one transaction, and on this small table the SHARE lock
-- (key look-ups go on; only key creation waits) lasts milliseconds.
-- squawk-ignore require-concurrent-index-creation
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_current_name_key ON api_keys (name) WHERE replaced_at IS NULL;
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_name_key;
