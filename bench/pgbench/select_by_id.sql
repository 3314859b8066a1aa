-- getPet: the service's select by primary key (src/db/pets.ts, pets.select_by_id), a random existing id.
\set id random(1, :maxid)
SELECT id, name, category_id, status FROM pets WHERE id = :id;
