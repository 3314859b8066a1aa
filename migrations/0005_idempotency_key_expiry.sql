-- Each Idempotency-Key carries its own expiry, set by the instance that
-- stored it from its IDEMPOTENCY_TTL_SECONDS. Before, every purge and lookup
-- judged all keys by its own instance's window, so one instance started with
-- a short window forgot and deleted the keys others had promised to keep.
-- Keys stored before this migration keep the longest window any instance may
-- be given (30 days): keeping a key too long costs a row, forgetting it early
-- costs a duplicate pet. The default gives the same to a row written by an
-- instance that has not been upgraded yet.
ALTER TABLE idempotency_keys ADD COLUMN expires_at timestamptz;
UPDATE idempotency_keys SET expires_at = created_at + interval '30 days';
ALTER TABLE idempotency_keys
  ALTER COLUMN expires_at SET DEFAULT now() + interval '30 days',
  ALTER COLUMN expires_at SET NOT NULL;

-- The purge and the lookup now go by expiry, not by age.
DROP INDEX idempotency_keys_created_at_idx;
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
