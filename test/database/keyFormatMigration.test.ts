import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { generateApiKey, hashApiKey } from '../../src/auth/keys.js';
import { listApiKeysWithHistory } from '../../src/db/apiKeys.js';
import { openDatabase, type Database } from '../../src/db/index.js';
import { loadMigrations, migrate } from '../../src/db/migrations.js';
import { postgresUnavailableReason, unmigratedDataDir, scratchPostgresDatabase } from '../helpers/databases.js';

const insert = { text: 'INSERT INTO api_keys (name, key_hash, key_prefix) VALUES ($1, $2, substr($2, 1, 8))' };
const backdated = {
  text: "INSERT INTO api_keys (name, key_hash, key_prefix, created_at) VALUES ($1, $2, substr($2, 1, 8), now() - interval '1 hour')",
};

/** Keys stored before 0006 (when no key had a checksum) are legacy; keys stored by the release between are unknown. */
async function recordsTheFormat(t: Test, db: Database): Promise<void> {
  const migrations = loadMigrations();
  await migrate(db, migrations.slice(0, 5));
  // Stored well before 0006, as a real one is: the embedded database's clock counts whole
  // milliseconds, and a key stored in the millisecond 0006 was applied is rightly not known (NULL).
  await db.query(backdated, ['before-checksums', hashApiKey(`pets_${randomBytes(32).toString('base64url')}`)]);
  await migrate(db, migrations.slice(0, 6));
  // The INSERT of a release that names no format column: either format.
  await db.query(insert, ['between', hashApiKey(generateApiKey())]);
  await migrate(db, migrations);
  const formats = (await listApiKeysWithHistory(db)).map(({ name, checksummed }) => ({ name, checksummed }));
  t.same(formats, [
    { name: 'before-checksums', checksummed: false },
    { name: 'between', checksummed: null },
  ]);
}

const noPostgres = await postgresUnavailableReason();

t.test('0007 records the format of keys on PostgreSQL', { skip: noPostgres ?? false }, async (t) => {
  const { db } = await scratchPostgresDatabase(t, 2);
  await recordsTheFormat(t, db);
});

t.test('0007 records the format of keys on the embedded database', async (t) => {
  const dir = await unmigratedDataDir();
  t.teardown(dir.remove);
  const db = await openDatabase({ dataDir: dir.path });
  t.teardown(() => db.close());
  await recordsTheFormat(t, db);
});
