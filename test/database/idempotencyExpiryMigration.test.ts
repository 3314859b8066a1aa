import t from 'tap';
import { loadMigrations, migrate } from '../../src/db/migrations.js';
import { postgresUnavailableReason, scratchPostgresDatabase } from '../helpers/databases.js';

// The embedded database runs the same SQL when its test template is built
// (on an empty table); rows already stored are what only an upgrade meets.
const noPostgres = await postgresUnavailableReason();

t.test(
  '0005 gives keys stored before it the longest window, and a writer that does not set one too',
  { skip: noPostgres ?? false },
  async (t) => {
    const { db } = await scratchPostgresDatabase(t, 2);
    const migrations = loadMigrations();
    await migrate(db, migrations.slice(0, 4));
    await db.query({
      text: "INSERT INTO api_keys (name, key_hash, key_prefix) VALUES ('k', repeat('a', 64), 'aaaaaaaa')",
    });
    // The columns an instance before 0005 writes, two days ago.
    const oldWriter =
      'INSERT INTO idempotency_keys (api_key_id, key, fingerprint, response_status, response_body, location, created_at) ' +
      "SELECT id, $1, repeat('b', 64), 201, '{}', '/v1/pets/1', now() - interval '2 days' FROM api_keys";
    await db.query({ text: oldWriter }, ['stored-before']);
    await migrate(db, migrations);
    await db.query({ text: oldWriter }, ['not-upgraded-writer']);

    const { rows } = await db.query<{ key: string; days: number }>({
      text:
        'SELECT key, round(extract(epoch FROM expires_at - now()) / 86400)::int AS days ' +
        'FROM idempotency_keys ORDER BY key',
    });
    // Days left: 30 from when each was stored.
    t.same(rows, [
      { key: 'not-upgraded-writer', days: 30 },
      { key: 'stored-before', days: 28 },
    ]);
  },
);
