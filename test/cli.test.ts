import t from 'tap';
import { openDatabase } from '../src/db/index.js';
import { createScratchPostgres, postgresUnavailableReason, scratchDir } from './helpers/databases.js';
import { runEntry } from './helpers/processes.js';

const lastLine = (text: string) => text.trimEnd().split('\n').pop() ?? '';

t.test('apikey on the embedded database', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const env = { DATA_DIR: dir.path };

  const created = await runEntry('src/cli/apikey.ts', ['create', 'ci-robot'], env);
  t.equal(created.code, 0, created.stderr);
  const key = lastLine(created.stdout);
  t.match(key, /^pets_[A-Za-z0-9_-]{43}$/, 'the last line is the key alone');

  const duplicate = await runEntry('src/cli/apikey.ts', ['create', 'ci-robot'], env);
  t.equal(duplicate.code, 2);
  t.match(duplicate.stderr, /exists already/);

  const listed = await runEntry('src/cli/apikey.ts', ['list'], env);
  t.equal(listed.code, 0);
  t.match(listed.stdout, /ci-robot\tpets_\S+…\tcreated \S+\tactive/);
  t.notMatch(listed.stdout, key, 'the key itself is never listed');

  const revoked = await runEntry('src/cli/apikey.ts', ['revoke', 'ci-robot'], env);
  t.equal(revoked.code, 0);
  t.match(revoked.stdout, /Revoked \d+ ci-robot/);
  t.match((await runEntry('src/cli/apikey.ts', ['list'], env)).stdout, /ci-robot.*revoked/);

  const again = await runEntry('src/cli/apikey.ts', ['revoke', 'ci-robot'], env);
  t.equal(again.code, 2, 'revoking an unknown or revoked key fails');

  const usage = await runEntry('src/cli/apikey.ts', ['frobnicate'], env);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /Usage: npm run apikey/);
});

t.test('the embedded data directory is locked while open', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const db = await openDatabase({ DATA_DIR: dir.path, DATABASE_POOL_SIZE: 1 });
  const refused = await runEntry('src/cli/apikey.ts', ['list'], { DATA_DIR: dir.path });
  t.equal(refused.code, 1);
  t.match(refused.stderr, new RegExp(`in use by process ${process.pid}`));
  await db.close();
  const allowed = await runEntry('src/cli/apikey.ts', ['list'], { DATA_DIR: dir.path });
  t.equal(allowed.code, 0, 'closing releases the lock');
});

t.test('a stale lock left by a dead process is taken over', async (t) => {
  const { writeFileSync } = await import('node:fs');
  const dir = scratchDir();
  t.teardown(dir.remove);
  writeFileSync(`${dir.path}/pets.lock`, '2147483646');
  const result = await runEntry('src/cli/apikey.ts', ['list'], { DATA_DIR: dir.path });
  t.equal(result.code, 0, result.stderr);
});

const postgresSkip = await postgresUnavailableReason();

t.test('migrate and the schema check on PostgreSQL', postgresSkip ? { skip: postgresSkip } : {}, async (t) => {
  const scratch = await createScratchPostgres();
  t.teardown(scratch.drop);
  const env = { DATABASE_URL: scratch.url };

  const refused = await runEntry('src/server.ts', [], { ...env, PORT: '0' });
  t.equal(refused.code, 1, 'the server refuses an unmigrated database');
  t.match(refused.stderr, /schema is at version 0 but this service needs version \d+.*npm run migrate/s);

  const keyRefused = await runEntry('src/cli/apikey.ts', ['list'], env);
  t.equal(keyRefused.code, 1);
  t.match(keyRefused.stderr, /npm run migrate/);

  const first = await runEntry('src/cli/migrate.ts', [], env);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /Applied 0001_create_pets, 0002_create_api_keys/);
  const second = await runEntry('src/cli/migrate.ts', [], env);
  t.equal(second.code, 0);
  t.match(second.stdout, /already current/);
});

t.test('migrate exits non-zero when it cannot migrate', async (t) => {
  const result = await runEntry('src/cli/migrate.ts', [], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing' });
  t.equal(result.code, 1);
  t.match(result.stderr, /Migration failed/);
});
