-- The capacity model's mix, one request per transaction: 10% createPet, 45% getPet, 45% listPets (limit 20).
\set dice random(1, 100)
\set id random(1, :maxid)
\set category random(1, 50)
\if :dice <= 10
INSERT INTO pets (name, category_id, status) VALUES ('pgbench', :category, 'pending') RETURNING id, name, category_id, status;
\elif :dice <= 55
SELECT id, name, category_id, status FROM pets WHERE id = :id;
\else
SELECT id, name, category_id, status FROM pets WHERE id > greatest(:id - 21, 0) ORDER BY id LIMIT 21;
\endif
