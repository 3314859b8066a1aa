-- listPets, limit 20: the service's keyset page (src/db/pets.ts, pets.list_after) after a random cursor;
-- 21 rows because the service asks one more to know whether a next page exists.
\set after random(0, :maxid - 21)
SELECT id, name, category_id, status FROM pets WHERE id > :after ORDER BY id LIMIT 21;
