-- listPets?status=available&limit=100: the status-filtered keyset page (src/db/pets.ts, unnamed in the
-- service: planned per run) after a random cursor.
\set after random(0, :maxid - 300)
SELECT id, name, category_id, status FROM pets WHERE status = 'available' AND id > :after ORDER BY id LIMIT 101;
