import pg from 'pg';
import t from 'tap';
import { migrate, type Migration } from '../../src/db/migrations.js';
import { postgresUnavailableReason, scratchPostgresDatabase } from '../helpers/databases.js';

// A deploy migrates while the service runs. Two migrations that lock tables
// in one order, and a service transaction that locks them in the other:
// the second migration waits for a table the transaction holds, and the
// transaction then asks for the table the first migration locked. Run as one
// transaction, the migrations still hold that first lock: a deadlock, and
// PostgreSQL cancels one side (40P01). Each in its own transaction, the first
// lock is gone when the second migration starts waiting.
const noPostgres = await postgresUnavailableReason();

const migrations: Migration[] = [
  { version: 1, name: 'tables', sql: 'CREATE TABLE first (n int); CREATE TABLE second (n int)' },
  { version: 2, name: 'alter_first', sql: 'ALTER TABLE first ADD COLUMN a int' },
  { version: 3, name: 'alter_second', sql: 'ALTER TABLE second ADD COLUMN b int' },
];

/** Resolves once a session other than the given one waits for a lock. */
async function migratorWaitingForLock(watcher: pg.Client, otherThan: number): Promise<void> {
  for (;;) {
    const { rows } = await watcher.query<{ waiting: boolean }>(
      "SELECT count(*) > 0 AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1",
      [otherThan],
    );
    if (rows[0]?.waiting) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

t.test(
  'each migration commits before the next one takes its locks: no deadlock with the service',
  { skip: noPostgres ?? false },
  async (t) => {
    const { db, url } = await scratchPostgresDatabase(t, 2);
    await migrate(db, migrations.slice(0, 1));

    const service = new pg.Client({ connectionString: url });
    const watcher = new pg.Client({ connectionString: url });
    await service.connect();
    await watcher.connect();
    t.teardown(() => Promise.all([service.end(), watcher.end()]));
    const servicePid = (await service.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;

    // The service's transaction writes to second first.
    await service.query('BEGIN');
    await service.query('INSERT INTO second VALUES (1)');
    const migrating = migrate(db, migrations).then(
      (applied) => ({ applied: applied.map((m) => m.version) }),
      (error: unknown) => ({ error: (error as { code?: string }).code ?? String(error) }),
    );
    // The migrator altered first and now waits for second.
    await migratorWaitingForLock(watcher, servicePid);
    // The transaction now asks for first: granted once the migration that altered it has committed.
    const serviceOutcome = await service.query('INSERT INTO first VALUES (1)').then(
      () => 'written',
      (error: unknown) => `failed with ${(error as { code?: string }).code}`,
    );
    await service.query(serviceOutcome === 'written' ? 'COMMIT' : 'ROLLBACK');

    t.equal(serviceOutcome, 'written', "the service's transaction is not cancelled as a deadlock");
    t.same(await migrating, { applied: [2, 3] }, 'the migrator applies both, after the transaction ends');
    const { rows } = await watcher.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    t.same(
      rows.map((row) => row.version),
      [1, 2, 3],
      'the ledger records each migration',
    );
  },
);

t.test(
  'a migration that fails leaves the ones before it applied, and itself not at all',
  { skip: noPostgres ?? false },
  async (t) => {
    const { db } = await scratchPostgresDatabase(t, 2);
    const failing: Migration = {
      version: 4,
      name: 'half_done',
      sql: 'ALTER TABLE first ADD COLUMN c int; ALTER TABLE missing ADD COLUMN d int',
    };
    await t.rejects(migrate(db, [...migrations, failing]), { code: '42P01' });
    const ledger = await db.query<{ version: number }>({
      text: 'SELECT version FROM schema_migrations ORDER BY version',
    });
    t.same(
      ledger.rows.map((row) => row.version),
      [1, 2, 3],
      'the ledger is at the last migration that succeeded',
    );
    const columns = await db.query<{ column_name: string }>({
      text: "SELECT column_name FROM information_schema.columns WHERE table_name = 'first' ORDER BY column_name",
    });
    t.same(
      columns.rows.map((row) => row.column_name),
      ['a', 'n'],
      'nothing of the failed migration stays',
    );
  },
);
