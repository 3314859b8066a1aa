import t, { type Test } from 'tap';
import { hashApiKey } from '../../src/auth/keys.js';
import { openDatabase } from '../../src/db/index.js';
import { runApiKey, runApiKeyCommand } from '../../src/cli/apikey.js';
import { runMigrate } from '../../src/cli/migrate.js';
import { startServer } from '../helpers/server.js';
import {
  createScratchPostgres,
  migratedDataDir,
  postgresUnavailableReason,
  testDatabaseUrl,
} from '../helpers/databases.js';
import { spawn } from 'node:child_process';
import { repoRoot } from '../../lib/repoRoot.js';
import { finished, runEntry, runInProcess } from '../helpers/processes.js';

// The commands run in-process (their run functions are what the entry points
// call); a few tests spawn real processes for what only a process shows: each
// entry point's exit code once, and a lock held by another process.
const apikey = (args: string[], env: Record<string, string>) =>
  runInProcess((streams) => runApiKey(args, env, streams));
const migrateCommand = (env: Record<string, string>, args: string[] = []) =>
  runInProcess((streams) => runMigrate(env, streams, args));

const lastLine = (text: string) => text.trimEnd().split('\n').pop() ?? '';

/**
 * Commands on an embedded database the test holds open: what runApiKey runs once it has opened one (the first
 * test runs each command whole, opening the database each time), for the tests of what a command's arguments
 * mean, without opening a database per command (0.35 s of CPU each).
 */
async function commandsOnOpenDatabase(t: Test) {
  const dir = await migratedDataDir();
  const db = await openDatabase({ dataDir: dir.path });
  t.teardown(async () => {
    await db.close();
    dir.remove();
  });
  return (args: string[]) => runInProcess((streams) => runApiKeyCommand(db, args, streams));
}

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
  t.equal(
    revoked.stdout,
    `Revoked key id 1 (name ci-robot, fingerprint sha256:${hashApiKey(key).slice(0, 8)})\n`,
    'one line: the id and the fingerprint say which key',
  );
  t.match((await apikey(['list'], env)).stdout, /ci-robot.*revoked/);

  const again = await apikey(['revoke', 'ci-robot'], env);
  t.equal(again.code, 2, 'revoking an unknown or revoked key fails');

  const usage = await apikey(['frobnicate'], env);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /Usage: npm run apikey/);
});

t.test('revoke takes a name, or an id with --id: one argument means one thing', async (t) => {
  const command = await commandsOnOpenDatabase(t);
  t.equal((await command(['create', 'alpha'])).code, 0);
  t.equal((await command(['create', '1'])).code, 0, 'a key may be named like an id');
  const ids = Object.fromEntries(
    (await command(['list'])).stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'))
      .map(([id, name]) => [name, id]),
  );
  t.equal(ids['alpha'], '1', 'alpha has id 1, which is also the name of the other key');

  const byName = await command(['revoke', '1']);
  t.equal(byName.code, 0, byName.stderr);
  t.match(
    byName.stdout,
    new RegExp(`^Revoked key id ${ids['1']} \\(name 1, fingerprint sha256:[0-9a-f]{8}\\)\n$`),
    'only the key named 1',
  );
  t.match(
    (await command(['list'])).stdout,
    /\talpha\t\S+\tchecksummed\tcreated \S+\tactive/,
    'the key with id 1 is untouched',
  );

  const byId = await command(['revoke', '--id', '1']);
  t.equal(byId.code, 0, byId.stderr);
  t.match(byId.stdout, /^Revoked key id 1 \(name alpha, fingerprint sha256:[0-9a-f]{8}\)\n$/);

  for (const args of [
    ['revoke'],
    ['revoke', '--id'],
    ['revoke', '--id', 'x'],
    ['revoke', 'a', 'b'],
    ['revoke', '--name'],
  ]) {
    const refused = await command(args);
    t.equal(refused.code, 2, `${args.join(' ')} is a usage error`);
  }
  t.match((await command(['revoke', '--id', '99'])).stderr, /No active key has the id 99/);
  t.match((await command(['frobnicate'])).stderr, /revoke --id <id>/, 'the usage names both forms');
});

t.test('revoke <name> during a rotation overlap prints one line per key revoked', async (t) => {
  const command = await commandsOnOpenDatabase(t);
  const first = lastLine((await command(['create', 'twice'])).stdout);
  const rotated = await command(['rotate', 'twice', '--overlap', '1h']);
  t.equal(rotated.code, 0, rotated.stderr);
  const second = lastLine(rotated.stdout);
  const revoked = await command(['revoke', 'twice']);
  t.equal(revoked.code, 0, revoked.stderr);
  t.equal(
    revoked.stdout,
    `Revoked key id 1 (name twice, fingerprint sha256:${hashApiKey(first).slice(0, 8)})\n` +
      `Revoked key id 2 (name twice, fingerprint sha256:${hashApiKey(second).slice(0, 8)})\n`,
  );
});

t.test('a single-valued option given twice is refused, naming it; nothing is stored', async (t) => {
  const command = await commandsOnOpenDatabase(t);
  for (const args of [
    ['create', 'twice', '--scopes', 'pets:read', '--scopes', 'pets:write'],
    ['create', 'twice', '--expires-in=1d', '--expires-in', '2d'],
    ['list', '--json', '--json'],
  ]) {
    const refused = await command(args);
    t.equal(refused.code, 2, args.join(' '));
    t.match(refused.stderr, /^--(scopes|expires-in|json) was given more than once: give it once\.\n$/);
  }
  t.equal((await command(['create', 'once'])).code, 0);
  const rotated = await command(['rotate', 'once', '--overlap', '1h', '--overlap', '0s']);
  t.equal(rotated.code, 2);
  t.match(rotated.stderr, /--overlap was given more than once/);
  t.same(
    JSON.parse((await command(['list', '--json'])).stdout).map((key: { name: string }) => key.name),
    ['once'],
    'only the key created without a repeated option, and it was not rotated',
  );
});

t.test('npm run --silent apikey -- list --json prints the JSON alone on stdout', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  t.equal((await apikey(['create', 'piped'], { DATA_DIR: dir.path })).code, 0);
  const child = spawn('npm', ['run', '--silent', 'apikey', '--', 'list', '--json'], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: dir.path, DATABASE_URL: '' },
  });
  const listed = await finished(child);
  t.equal(listed.code, 0, listed.stderr);
  const keys = JSON.parse(listed.stdout) as Array<{ name: string }>;
  t.same(
    keys.map((key) => key.name),
    ['piped'],
    'stdout parses as JSON, as `| jq` needs',
  );
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
  // In this process: the tests above show the entry point's exit codes as a process (0 through npm, 1 on a held lock).
  const help = await apikey(['--help'], unreachable);
  t.equal(help.code, 0, '--help');
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
  const { runMigrate } = await import('../../src/cli/migrate.js');
  const { runApiKey } = await import('../../src/cli/apikey.js');
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
  const { runMigrate } = await import('../../src/cli/migrate.js');
  const { startServer } = await import('../../src/process/startServer.js');
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
