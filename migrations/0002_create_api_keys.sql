CREATE TABLE api_keys (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        text        NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 64),
  -- SHA-256 of the key, hex. Keys are 256-bit random values, so an unsalted
  -- hash is enough and lets a key be looked up by its hash.
  key_hash    text        NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  -- The first characters of the key, so people can tell keys apart.
  key_prefix  text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);
