-- Whether the key carries a checksum (pets_ and 49 base62 characters, the
-- last 6 a CRC-32 of the rest): `apikey list` shows the format, and
-- `revoke --legacy` stops the keys without one. Only the hash is stored, so
-- the format is written when a key is stored; NULL: not known. The release
-- before this one names no new column in its INSERTs, so its keys get NULL.
SET LOCAL lock_timeout = '5s';

ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS checksummed boolean;

-- Keys stored before the checksum existed (before migration 0006, which came
-- with it) carry none. Later rows stay NULL: a bootstrap key may have either
-- format. The table holds hundreds of rows, so this takes milliseconds.
UPDATE api_keys SET checksummed = false
  WHERE checksummed IS NULL
    AND created_at < (SELECT applied_at FROM schema_migrations WHERE version = 6);
