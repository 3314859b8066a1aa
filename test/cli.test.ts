import t from 'tap';
import { hashApiKey } from '../src/auth/keys.js';
import { openDatabase } from '../src/db/index.js';
import { runApiKey } from '../src/cli/apikey.js';
import { runMigrate } from '../src/cli/migrate.js';
import { startServer } from './helpers/server.js';
import {
  createScratchPostgres,
  migratedDataDir,
  postgresUnavailableReason,
  testDatabaseUrl,
} from './helpers/databases.js';
import { runEntry, runInProcess } from './helpers/processes.js';

// The commands run in-process (their run functions are what the entry points
// call); a few tests spawn real processes for what only a process shows: each
// entry point's exit code once, and a lock held by another process.
const apikey = (args: string[], env: Record<string, string>) =>
  runInProcess((streams) => runApiKey(args, env, streams));
const migrateCommand = (env: Record<string, string>, args: string[] = []) =>
  runInProcess((streams) => runMigrate(env, streams, args));

const lastLine = (text: string) => text.trimEnd().split('\n').pop() ?? '';

t.test('apikey on the embedded database', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const env = { DATA_DIR: dir.path };

  const created = await apikey(['create', 'ci-robot'], env);
  t.equal(created.code, 0, created.stderr);
  const key = lastLine(created.stdout);
  t.match(key, /^pets_[0-9A-Za-z]{49}$/, 'the last line is the key alone');

  const duplicate = await apikey(['create', 'ci-robot'], env);
  t.equal(duplicate.code, 2);
  t.match(duplicate.stderr, /exists already/);

  const listed = await apikey(['list'], env);
  t.equal(listed.code, 0);
  t.match(
    listed.stdout,
    new RegExp(`ci-robot\tsha256:${hashApiKey(key).slice(0, 8)}\tchecksummed\tcreated \\S+\tactive`),
  );
  t.notMatch(listed.stdout, key.slice(0, 8), 'no characters of the key are listed');
  t.notMatch(listed.stdout, key, 'the key itself is never listed');

  const revoked = await apikey(['revoke', 'ci-robot'], env);
  t.equal(revoked.code, 0);
  t.match(revoked.stdout, /Revoked \d+ ci-robot/);
  t.match((await apikey(['list'], env)).stdout, /ci-robot.*revoked/);

  const again = await apikey(['revoke', 'ci-robot'], env);
  t.equal(again.code, 2, 'revoking an unknown or revoked key fails');

  const usage = await apikey(['frobnicate'], env);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /Usage: npm run apikey/);
});

t.test('revoke takes a name, or an id with --id: one argument means one thing', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const env = { DATA_DIR: dir.path };
  t.equal((await apikey(['create', 'alpha'], env)).code, 0);
  t.equal((await apikey(['create', '1'], env)).code, 0, 'a key may be named like an id');
  const ids = Object.fromEntries(
    (await apikey(['list'], env)).stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'))
      .map(([id, name]) => [name, id]),
  );
  t.equal(ids['alpha'], '1', 'alpha has id 1, which is also the name of the other key');

  const byName = await apikey(['revoke', '1'], env);
  t.equal(byName.code, 0, byName.stderr);
  t.equal(byName.stdout, `Revoked ${ids['1']} 1\n`, 'only the key named 1');
  t.match(
    (await apikey(['list'], env)).stdout,
    /\talpha\t\S+\tchecksummed\tcreated \S+\tactive/,
    'the key with id 1 is untouched',
  );

  const byId = await apikey(['revoke', '--id', '1'], env);
  t.equal(byId.code, 0, byId.stderr);
  t.equal(byId.stdout, 'Revoked 1 alpha\n');

  for (const args of [
    ['revoke'],
    ['revoke', '--id'],
    ['revoke', '--id', 'x'],
    ['revoke', 'a', 'b'],
    ['revoke', '--name'],
  ]) {
    const refused = await apikey(args, env);
    t.equal(refused.code, 2, `${args.join(' ')} is a usage error`);
  }
  t.match((await apikey(['revoke', '--id', '99'], env)).stderr, /No active key has the id 99/);
  t.match((await apikey(['frobnicate'], env)).stderr, /revoke --id <id>/, 'the usage names both forms');
});

t.test('the embedded data directory is locked while open', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const db = await openDatabase({ dataDir: dir.path });
  const refused = await runEntry('src/cli/apikey.ts', ['list'], { DATA_DIR: dir.path });
  t.equal(refused.code, 1, 'another process is refused, with exit code 1');
  t.match(refused.stderr, new RegExp(`in use by process ${process.pid}`));
  await db.close();
  const allowed = await apikey(['list'], { DATA_DIR: dir.path });
  t.equal(allowed.code, 0, 'closing releases the lock');
});

t.test('npm run apikey -- --help, -- create --help and migrate -- --help exit 0', async (t) => {
  const unreachable = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing' };
  // One as a process (the exit code the entry point sets; migrate's is below), the others in this one.
  const help = await runEntry('src/cli/apikey.ts', ['--help'], unreachable);
  t.equal(help.code, 0, '--help, as a process');
  t.match(help.stdout, /^Usage: npm run apikey -- <command>/);
  const createHelp = await apikey(['create', '--help'], unreachable);
  t.equal(createHelp.code, 0, 'create --help');
  t.match(createHelp.stdout, /^Usage: npm run apikey -- <command>/);
  const migrateHelp = await migrateCommand(unreachable, ['--help']);
  t.equal(migrateHelp.code, 0, 'npm run migrate -- --help migrates nothing');
  t.match(migrateHelp.stdout, /^Usage: npm run migrate/);
});

t.test('a stale lock left by a dead process is taken over', async (t) => {
  const { writeFileSync } = await import('node:fs');
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  writeFileSync(`${dir.path}/pets.lock`, '2147483646');
  const result = await apikey(['list'], { DATA_DIR: dir.path });
  t.equal(result.code, 0, result.stderr);
});

const postgresSkip = await postgresUnavailableReason();

t.test('migrate and the schema check on PostgreSQL', postgresSkip ? { skip: postgresSkip } : {}, async (t) => {
  const scratch = await createScratchPostgres();
  t.teardown(scratch.drop);
  const env = { DATABASE_URL: scratch.url };

  await t.rejects(
    startServer({ ...env, PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'silent' }),
    {
      name: 'StartupError',
      exitCode: 1,
      message: /schema is at version 0 but this service needs version \d+.*npm run migrate/s,
    },
    'the server refuses an unmigrated database',
  );

  const keyRefused = await apikey(['list'], env);
  t.equal(keyRefused.code, 1);
  t.match(keyRefused.stderr, /npm run migrate/);

  const first = await migrateCommand(env);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /Applied 0001_create_pets, 0002_create_api_keys/);
  const second = await migrateCommand(env);
  t.equal(second.code, 0);
  t.match(second.stdout, /already current/);
});

t.test('migrate exits non-zero when it cannot migrate, as a process', async (t) => {
  const result = await runEntry('src/cli/migrate.ts', [], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nothing' });
  t.equal(result.code, 1);
  t.match(result.stderr, /Migration failed/);
});

t.test(
  'migrate against a database or role that does not exist: one line saying what to do, no stack',
  postgresSkip ? { skip: postgresSkip } : {},
  async (t) => {
    const missing = new URL(testDatabaseUrl);
    missing.pathname = `/pets_missing_${process.pid}`;
    const noDatabase = await migrateCommand({ DATABASE_URL: missing.toString() });
    t.equal(noDatabase.code, 1);
    t.equal(
      noDatabase.stderr.trimEnd(),
      `Migration failed: database "pets_missing_${process.pid}" does not exist: ` +
        `create it first (createdb pets_missing_${process.pid}, or CREATE DATABASE pets_missing_${process.pid} in psql), then run this again`,
    );
    const noRole = new URL(testDatabaseUrl);
    noRole.username = 'nobody_here';
    const refused = await migrateCommand({ DATABASE_URL: noRole.toString() });
    t.equal(refused.code, 1);
    t.match(refused.stderr, /^Migration failed: .*nobody_here.* \(PostgreSQL error 28[0-9A-Z]{3}\)\n$/);
    t.notMatch(noDatabase.stderr + refused.stderr, /\n\s+at /, 'no stack trace');
  },
);

/** Collects what a CLI writes. */
function captured() {
  let text = '';
  return { stream: { write: (chunk: string) => ((text += chunk), true) } as NodeJS.WritableStream, text: () => text };
}

t.test('migrations and keys go to DATABASE_DIRECT_URL', postgresSkip ? { skip: postgresSkip } : {}, async (t) => {
  const { runMigrate } = await import('../src/cli/migrate.js');
  const { runApiKey } = await import('../src/cli/apikey.js');
  const scratch = await createScratchPostgres();
  t.teardown(scratch.drop);
  // DATABASE_URL answers nothing: only the direct URL can have done the work.
  const pooled = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/pets', DATABASE_STATEMENTS: 'unnamed' };

  const out = captured();
  const err = captured();
  t.equal(await runMigrate(pooled, { out: out.stream, err: err.stream }), 1, 'refused without a direct URL');
  t.match(err.text(), /^Migration failed: .*needs DATABASE_DIRECT_URL/);

  const env = { ...pooled, DATABASE_DIRECT_URL: scratch.url };
  t.equal(await runMigrate(env, { out: out.stream, err: err.stream }), 0, err.text());
  t.match(out.text(), /Applied 0001_create_pets/);
  t.equal(await runApiKey(['create', 'direct'], env, { out: out.stream, err: err.stream }), 0, err.text());
  t.match(out.text(), /Created API key direct/);
});

t.test('a read-only primary is refused in one line', postgresSkip ? { skip: postgresSkip } : {}, async (t) => {
  const { runMigrate } = await import('../src/cli/migrate.js');
  const { startServer } = await import('../src/process/startServer.js');
  const scratch = await createScratchPostgres();
  t.teardown(scratch.drop);
  const env = { DATABASE_URL: scratch.url };
  const out = captured();
  const err = captured();
  t.equal(await runMigrate(env, { out: out.stream, err: err.stream }), 0, err.text());
  const name = new URL(scratch.url).pathname.slice(1);
  const admin = await openDatabase({ url: scratch.url, poolSize: 1 });
  await admin.execScript(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
  await admin.close();

  // main() prints a StartupError's message alone and exits with its code.
  await t.rejects(startServer({ ...env, PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'silent' }), {
    name: 'StartupError',
    exitCode: 1,
    message:
      /^DATABASE_URL points at a database that only allows read-only transactions \(transaction_read_only is on\), but the service writes there: point it at the primary \(replicas go in DATABASE_READ_URL\)\.$/,
  });
  t.equal(await runMigrate(env, { out: out.stream, err: err.stream }), 1);
  t.match(err.text(), /read-only transactions \(transaction_read_only is on\): migrate the primary/);
});
