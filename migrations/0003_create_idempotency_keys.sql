-- The first answer to a createPet request sent with an Idempotency-Key,
-- written in the transaction that adds the pet, so that a retry gets that
-- answer again whichever instance it reaches, even after a crash between the
-- commit and the answer. A request in flight holds a transaction-scoped
-- advisory lock on (api_key_id, key) instead of a row, so a crash leaves no
-- "in flight" state behind.
CREATE TABLE idempotency_keys (
  api_key_id      bigint      NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  key             text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
  -- SHA-256 (hex) of the request body as parsed JSON with sorted keys.
  fingerprint     text        NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
  response_status smallint    NOT NULL,
  response_body   text        NOT NULL,
  location        text        NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (api_key_id, key)
);

-- The purge deletes by age.
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);
