import t, { type Test } from 'tap';
import { hashApiKey } from '../../src/auth/keys.js';
import { openDatabase, type Database } from '../../src/db/index.js';
import { loadMigrations, migrate } from '../../src/db/migrations.js';
import { postgresUnavailableReason, unmigratedDataDir, scratchPostgresDatabase } from '../helpers/databases.js';

const oldKey = 'pets_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG';

async function rewritesOldRows(t: Test, db: Database): Promise<void> {
  const migrations = loadMigrations();
  await migrate(db, migrations.slice(0, 3));
  await db.query({ text: 'INSERT INTO api_keys (name, key_hash, key_prefix) VALUES ($1, $2, $3)' }, [
    'old',
    hashApiKey(oldKey),
    oldKey.slice(0, 11),
  ]);
  await migrate(db, migrations);
  const { rows } = await db.query<{ key_prefix: string }>({ text: 'SELECT key_prefix FROM api_keys' });
  t.same(rows, [{ key_prefix: hashApiKey(oldKey).slice(0, 8) }], 'the clear prefix is replaced by the hash prefix');
  await t.rejects(
    db.query({ text: 'INSERT INTO api_keys (name, key_hash, key_prefix) VALUES ($1, $2, $3)' }, [
      'clear',
      hashApiKey(`${oldKey}x`),
      oldKey.slice(0, 11),
    ]),
    'no writer can store characters of a key any more',
  );
}

const noPostgres = await postgresUnavailableReason();

t.test('0004 rewrites key_prefix on PostgreSQL', { skip: noPostgres ?? false }, async (t) => {
  const { db } = await scratchPostgresDatabase(t, 2);
  await rewritesOldRows(t, db);
});

t.test('0004 rewrites key_prefix on the embedded database', async (t) => {
  const dir = await unmigratedDataDir();
  t.teardown(dir.remove);
  const db = await openDatabase({ dataDir: dir.path });
  t.teardown(() => db.close());
  await rewritesOldRows(t, db);
});
