CREATE TABLE pets (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  category_id bigint      NOT NULL CHECK (category_id BETWEEN 1 AND 9007199254740991),
  status      text        NOT NULL DEFAULT 'available'
                          CHECK (status IN ('available', 'pending', 'sold')),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Serves "WHERE status = $1 AND id > $2 ORDER BY id LIMIT n" by reading only
-- the rows returned; the primary key serves the unfiltered list.
CREATE INDEX pets_status_id_idx ON pets (status, id);
