import { spawn } from 'node:child_process';
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import t, { type Test } from 'tap';
import { generateApiKey } from '../../src/auth/keys.js';
import { runApiKey, runApiKeyCommand } from '../../src/cli/apikey.js';
import { findControlSocket } from '../../src/control/socketPath.js';
import { keyChangesApplicationName } from '../../src/db/keyChanges.js';
import { openDatabase } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrations.js';
import { startServer } from '../helpers/server.js';
import { createScratchPostgres, postgresUnavailableReason } from '../helpers/databases.js';
import { copyEmbeddedTemplate } from '../helpers/embeddedTemplate.js';
import { finished, runInProcess, spawnEntry, textSink, waitForOutput, type Finished } from '../helpers/processes.js';
import { scratchDir } from '../helpers/scratchSpace.js';

// Keys changed while the service runs: on PostgreSQL every instance hears
// the change at once (LISTEN/NOTIFY), on the embedded database the CLI's
// commands run inside the server (its control socket). The cache is set to
// its longest, so that only the change reaching the instance can refuse a key.
const cacheSeconds = '300';

const noPostgres = await postgresUnavailableReason();

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1) ?? '';

async function statusWith(api: string, key: string): Promise<number> {
  const response = await fetch(`${api}/pets`, { headers: { authorization: `Bearer ${key}` } });
  await response.arrayBuffer();
  return response.status;
}

/**
 * How long, polling, until the instance answers the key with 401. The
 * ceiling is a generous bound on a busy machine, still far below the cache's
 * 300 s: a refusal before it can only come from the change reaching the instance.
 */
const refusalCeilingMs = 60_000;
async function msUntilRefused(api: string, key: string): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < refusalCeilingMs) {
    if ((await statusWith(api, key)) === 401) return Math.round(performance.now() - start);
    await sleep(10);
  }
  throw new Error(`${api} still accepts the key after ${refusalCeilingMs} ms`);
}

/** What an instance logs each time it starts listening for key changes (src/process/startServer.ts). */
const listeningLine = 'listening for API key changes';

/** Polls until the condition holds, failing after refusalCeilingMs. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > refusalCeilingMs) throw new Error(`not ${what} after ${refusalCeilingMs} ms`);
    await sleep(10);
  }
}

/** The key-change listeners' sessions on the database, once there are `count` of them. */
async function listenerSessions(admin: pg.Client, count: number): Promise<number[]> {
  const start = performance.now();
  for (;;) {
    const { rows } = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
      [keyChangesApplicationName],
    );
    if (rows.length === count || performance.now() - start > refusalCeilingMs) return rows.map((row) => row.pid);
    await sleep(10);
  }
}

/** The server as a process of its own, once it serves; its address with the base path. */
async function serverProcess(t: Test, env: Record<string, string>) {
  const child = spawnEntry('src/server.ts', [], { PORT: '0', API_KEY_CACHE_SECONDS: cacheSeconds, ...env });
  const done = finished(child);
  t.teardown(() => child.kill('SIGKILL'));
  const [, address] = await waitForOutput(child, /serving (http:\/\/[0-9.:]+)/);
  return { child, done, api: `${address}/v1` };
}

t.test(
  'PostgreSQL, two instances: a revocation on one is refused by the other without waiting for the cache',
  { skip: noPostgres ?? false },
  async (t) => {
    const scratch = await createScratchPostgres();
    t.teardown(scratch.drop);
    const db = await openDatabase({ url: scratch.url, poolSize: 1 });
    await migrate(db);
    await db.close();
    const env = { DATABASE_URL: scratch.url };
    const apikey = (args: string[]) => runInProcess((streams) => runApiKey(args, env, streams));
    const created = async (name: string) => {
      const result = await apikey(['create', name]);
      t.equal(result.code, 0, result.stderr);
      return lastLine(result.stdout);
    };
    const revoked = await created('revoked');
    const rotated = await created('rotated');
    const unheard = await created('unheard');
    const marker = await created('marker');
    // Two instances in this process (cheaper than child processes), each with its own pool, listening
    // connection and key cache: what one hears reaches the other only through PostgreSQL.
    const instance = async () => {
      const log = textSink();
      const running = await startServer(
        { ...env, PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'info', API_KEY_CACHE_SECONDS: cacheSeconds },
        textSink().stream,
        { logStream: log.stream },
      );
      t.teardown(() => running.shutdown('SIGINT'));
      // Each time it starts listening it forgets every key (what was committed before was never announced to
      // it): the first time may come after it serves, so the keys are remembered only once it listens.
      const listened = () => log.text().split(listeningLine).length - 1;
      return { api: `${running.address}/v1`, listened, live: () => running.db.keyChanges.live() };
    };
    const first = await instance();
    const second = await instance();
    for (const started of [first, second]) await until(() => started.live(), 'listening for key changes');
    t.same([first.listened(), second.listened()], [1, 1], 'each says once that it listens');
    for (const key of [revoked, rotated, unheard, marker])
      for (const instance of [first, second]) t.equal(await statusWith(instance.api, key), 200, 'remembered');

    t.equal((await apikey(['revoke', 'revoked'])).code, 0);
    const revokedAfter = await Promise.all([msUntilRefused(second.api, revoked), msUntilRefused(first.api, revoked)]);
    t.pass(`revoked: refused by each instance after ${revokedAfter.join(' and ')} ms`);

    const rotation = await apikey(['rotate', 'rotated', '--overlap', '0s']);
    t.equal(rotation.code, 0, rotation.stderr);
    const rotatedAfter = await msUntilRefused(second.api, rotated);
    t.pass(`rotate --overlap 0s: the old key refused after ${rotatedAfter} ms, as printed`);
    t.equal(await statusWith(second.api, lastLine(rotation.stdout)), 200, 'the new key works');

    // A revocation whose announcement is lost (the trigger off for this
    // session), then the listening sessions ended: each instance forgets
    // every key when it listens again.
    const admin = new pg.Client({ connectionString: scratch.url });
    await admin.connect();
    t.teardown(() => admin.end());
    await admin.query('BEGIN');
    await admin.query('SET LOCAL session_replication_role = replica');
    await admin.query("UPDATE api_keys SET revoked_at = now() WHERE name = 'unheard'");
    await admin.query('COMMIT');
    // An announced revocation after it: once the instance has heard that one, it would have heard the first.
    t.equal((await apikey(['revoke', 'marker'])).code, 0);
    await msUntilRefused(second.api, marker);
    if (second.listened() === 1)
      t.equal(await statusWith(second.api, unheard), 200, 'unannounced, the revocation waits for the cache');
    // Its listening connection was lost and came back meanwhile (a heartbeat late on a busy machine): it forgot every key.
    else t.equal(await statusWith(second.api, unheard), 401, 'listening again, it forgot every key');
    const listeners = await listenerSessions(admin, 2);
    t.equal(listeners.length, 2, 'one listening session per instance, found by its application_name');
    const { rows } = await admin.query<{ ended: boolean }>(
      'SELECT pg_terminate_backend(pid) AS ended FROM unnest($1::int[]) AS pid',
      [listeners],
    );
    t.same(
      rows.map((row) => row.ended),
      [true, true],
      'both listening sessions ended',
    );
    const unheardAfter = await msUntilRefused(second.api, unheard);
    t.pass(`a lost listening connection: every key forgotten when it is back (${unheardAfter} ms)`);
  },
);

const keyPattern = /pets_[0-9A-Za-z]{49}/g;
const timePattern = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;

/** The output without what differs from run to run: keys, times, fingerprints, last uses. */
function comparable(result: Finished) {
  const normal = (text: string) =>
    text
      .replace(keyPattern, '<key>')
      .replace(timePattern, '<time>')
      .replace(/sha256:[0-9a-f]+/g, 'sha256:<fp>')
      .replace(/(used <time>|never used)/g, '<use>')
      .replace(/"lastUsedAt": (null|"<time>")/g, '"lastUsedAt": <use>');
  return { code: result.code, stdout: normal(result.stdout), stderr: normal(result.stderr) };
}

// Each step's command, and what the test checks with the server after it.
const steps: Array<{ args: string[]; then?: 'old key refused' | 'key refused' }> = [
  { args: ['create', 'svc', '--scopes', 'pets:read'] },
  { args: ['create', 'svc'] },
  { args: ['list'] },
  { args: ['list', '--json'] },
  { args: ['rotate', 'svc', '--overlap', '0s'], then: 'old key refused' },
  { args: ['revoke', 'nosuch'] },
  { args: ['revoke', 'svc'], then: 'key refused' },
  { args: ['list'] },
  { args: ['create', 'bad name'] },
];

t.test('the embedded database: apikey commands reach the running server over its control socket', async (t) => {
  const reference = scratchDir();
  t.teardown(reference.remove);
  await copyEmbeddedTemplate(reference.path);
  // A DATA_DIR too long for a socket path (108 bytes): the socket goes to a folder under XDG_RUNTIME_DIR.
  const scratch = scratchDir();
  t.teardown(scratch.remove);
  const dataDir = join(scratch.path, `a-data-directory-with-a-long-path-${'x'.repeat(60)}`);
  await copyEmbeddedTemplate(dataDir);
  const runtime = scratchDir();
  t.teardown(runtime.remove);
  const env = { DATA_DIR: dataDir };
  const apikey = (args: string[], on = env) => runInProcess((streams) => runApiKey(args, on, streams));
  for (const on of [env, { DATA_DIR: reference.path }]) t.equal((await apikey(['create', 'first'], on)).code, 0);

  // Without a server: the same commands on a database of the same state, opened once (cheaper than
  // opening it per command, and what runApiKey runs once it has opened it).
  const expected = [];
  const referenceDb = await openDatabase({ dataDir: reference.path });
  for (const step of steps)
    expected.push(comparable(await runInProcess((streams) => runApiKeyCommand(referenceDb, step.args, streams))));
  await referenceDb.close();

  const server = await serverProcess(t, { ...env, XDG_RUNTIME_DIR: runtime.path });
  const socket = findControlSocket(dataDir)?.path;
  t.ok(socket?.startsWith(runtime.path), `the socket is under XDG_RUNTIME_DIR: ${socket}`);
  t.ok(Buffer.byteLength(socket ?? '') < 104, 'short enough to bind');
  t.equal(statSync(socket ?? '').mode & 0o777, 0o600, 'the socket: its owner only');
  t.equal(statSync(dirname(socket ?? '')).mode & 0o777, 0o700, 'in a folder only its owner enters');
  t.equal(statSync(join(dataDir, 'control')).mode & 0o777, 0o700, 'DATA_DIR/control, recording it, too');

  let key = '';
  for (const [index, step] of steps.entries()) {
    const result = await apikey(step.args);
    t.same(comparable(result), expected[index], `${step.args.join(' ')}: the same output and exit code`);
    if (step.args[0] === 'create' && result.code === 0) {
      key = lastLine(result.stdout);
      t.equal(await statusWith(server.api, key), 200, 'the new key works at once');
    }
    if (step.then === 'old key refused') {
      t.equal(await statusWith(server.api, key), 401, 'the old key refused at once, as "works until" says');
      key = lastLine(result.stdout);
      t.equal(await statusWith(server.api, key), 200, 'the new key works');
    }
    if (step.then === 'key refused') t.equal(await statusWith(server.api, key), 401, 'the revoked key refused at once');
  }

  server.child.kill('SIGTERM');
  t.equal((await server.done).code, 0, 'the server stops');
  t.equal(findControlSocket(dataDir), undefined, 'and removes its socket');
  t.same(readdirSync(runtime.path), [], 'and the folder it made for it');
  t.equal((await apikey(['list'])).code, 0, 'without a server the CLI opens the database itself');
});

t.test('a socket left by a server that died is replaced at the next start', async (t) => {
  const scratch = scratchDir();
  t.teardown(scratch.remove);
  await copyEmbeddedTemplate(scratch.path);
  const env = {
    DATA_DIR: scratch.path,
    PORT: '0',
    LOG_LEVEL: 'silent',
    BOOTSTRAP_API_KEY: generateApiKey(),
  };
  const socket = join(scratch.path, 'control', 'apikey.sock');
  // A socket file whose listener is gone, as a server killed with SIGKILL leaves it.
  const holder = spawn(process.execPath, [
    '-e',
    `require('fs').mkdirSync(${JSON.stringify(dirname(socket))}, { recursive: true });
     require('net').createServer().listen(${JSON.stringify(socket)}, () => process.kill(process.pid, 'SIGKILL'))`,
  ]);
  await new Promise((resolve) => holder.on('close', resolve));
  t.ok(lstatSync(socket).isSocket(), 'a stale socket is there');

  const running = await startServer(env, textSink().stream);
  t.teardown(() => running.shutdown('SIGINT'));
  t.equal(running.controlSocket, socket);
  const listed = await runInProcess((streams) => runApiKey(['list'], env, streams));
  t.equal(listed.code, 0, listed.stderr);
  t.match(listed.stdout, /bootstrap-/, 'the command ran in the server');
});
