-- key_prefix held the first 11 characters of every key in clear (over half of
-- a 20-character key). It now holds the first 8 hex digits of the key's
-- SHA-256: enough to tell keys apart, nothing that shortens a guess. Rows are
-- rewritten from key_hash; the CHECK keeps any writer from storing more.
UPDATE api_keys SET key_prefix = substr(key_hash, 1, 8);
ALTER TABLE api_keys
  ADD CONSTRAINT api_keys_key_prefix_from_hash CHECK (key_prefix = substr(key_hash, 1, 8));
