-- A page filtered by status ("WHERE status = $1 AND id > $2 ORDER BY id
-- LIMIT n") gets an index of that status's ids alone, so its plan reads only
-- the rows it returns whatever the statistics say. With (status, id) the
-- planner weighed it against the primary key filtered by status, on the
-- share of each status it last sampled: once the table outgrew its last
-- ANALYZE (autovacuum off), it walked the primary key and read every row of
-- other statuses in between (2,079 rows for a page of 21 at 1,000,000 pets,
-- all of a status absent from the rows left). The primary key, filtered, is
-- never cheaper than one of these. One index per value of the status CHECK
-- of 0001; a new status needs its own (test/database/stalePlans.test.ts).
-- (status, id) goes in 0010, a transaction of its own: dropped here, the
-- builds' SHARE lock would be held while the drop waits for ACCESS EXCLUSIVE,
-- and a service transaction that read pets and then writes would deadlock.
SET LOCAL lock_timeout = '5s';
-- A migration runs in a transaction, so not CONCURRENTLY: the SHARE lock lets
-- reads go on and holds createPet for the build (about a second per million pets).
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX IF NOT EXISTS pets_available_id_idx ON pets (id) WHERE status = 'available';
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX IF NOT EXISTS pets_pending_id_idx ON pets (id) WHERE status = 'pending';
-- squawk-ignore require-concurrent-index-creation
CREATE INDEX IF NOT EXISTS pets_sold_id_idx ON pets (id) WHERE status = 'sold';
