-- 0009 gave each status its own index of ids, which every status page uses;
-- (status, id) only costs each insert one more index to update. DROP INDEX
-- takes an ACCESS EXCLUSIVE lock on pets for the moment it runs: lock_timeout
-- makes the migration give up rather than hold every request queued behind
-- a long transaction. Not CONCURRENTLY: a migration runs in a transaction.
SET LOCAL lock_timeout = '5s';
-- squawk-ignore require-concurrent-index-deletion
DROP INDEX IF EXISTS pets_status_id_idx;
