import t, { type Test } from 'tap';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import type { Database } from '../../src/db/index.js';
import { insertPet } from '../../src/db/pets.js';
import { openBackend, postgresUnavailableReason, type Backend, type OpenedBackend } from '../helpers/databases.js';

// A test database handed back is handed out again only as good as a new one (test/helpers/databases.ts): every
// row gone, the API keys too, ids from 1 again, the session's settings back to their defaults; one whose schema
// the test changed, or that the test closed itself, is never handed out again.

const where = (opened: OpenedBackend) => opened.env['DATA_DIR'] ?? opened.env['DATABASE_URL'];
const count = async (db: Database, table: string) =>
  (await db.query<{ n: number }>({ text: `SELECT count(*)::int AS n FROM ${table}` })).rows[0]!.n;
const newPet = (db: Database, name: string) => insertPet(db, { name, categoryId: 1, status: 'available' });

async function handsOutAgainOnlyAsNew(t: Test, backend: Backend) {
  const used = await openBackend(backend);
  await insertApiKey(used.db, toStoredKey('test', generateApiKey()));
  for (const name of ['first', 'second', 'third']) await newPet(used.db, name);
  if (backend === 'embedded') await used.db.execScript("SET statement_timeout = '7s'");
  await used.close();

  const again = await openBackend(backend);
  t.equal(where(again), where(used), 'the database handed back is handed out again');
  t.same([await count(again.db, 'pets'), await count(again.db, 'api_keys')], [0, 0], 'with no pet and no key');
  t.equal((await newPet(again.db, 'after')).id, 1, 'a new pet gets id 1, as on a new database');
  t.equal(
    (await again.db.query<{ version: number }>({ text: 'SELECT max(version)::int AS version FROM schema_migrations' }))
      .rows[0]!.version > 0,
    true,
    'the migrations stay applied',
  );
  if (backend === 'embedded') {
    const { rows } = await again.db.query<{ statement_timeout: string }>({ text: 'SHOW statement_timeout' });
    t.equal(rows[0]!.statement_timeout, '0', "the last test's session setting is gone");
  }
  await again.db.query({ text: 'ALTER TABLE pets ADD COLUMN nickname text' });
  await again.close();

  const fresh = await openBackend(backend);
  t.not(where(fresh), where(again), 'a database whose schema a test changed is not handed out again');
  const { rows } = await fresh.db.query<{ n: number }>({
    text: "SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'pets' AND column_name = 'nickname'",
  });
  t.equal(rows[0]!.n, 0, 'the one handed out has the schema the migrations make');
  await fresh.db.close();
  await fresh.close();

  const last = await openBackend(backend);
  t.not(where(last), where(fresh), 'nor one the test closed itself');
  await last.close();
}

const noPostgres = await postgresUnavailableReason();
t.test('a test database handed back, on the embedded database', (t) => handsOutAgainOnlyAsNew(t, 'embedded'));
t.test('a test database handed back, on PostgreSQL', { skip: noPostgres ?? false }, (t) =>
  handsOutAgainOnlyAsNew(t, 'postgres'),
);
