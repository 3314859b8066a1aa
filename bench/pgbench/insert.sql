-- createPet: the service's INSERT (src/db/pets.ts, pets.insert), one per transaction.
\set category random(1, 50)
INSERT INTO pets (name, category_id, status) VALUES ('pgbench', :category, 'pending') RETURNING id, name, category_id, status;
