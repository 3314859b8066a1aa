import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { waitUntil } from '../lib/instances/processes.js';
import t from 'tap';
import { generateApiKey } from '../src/auth/keys.js';
import { startServer } from './helpers/server.js';
import { postgresUnavailableReason, testDatabaseUrl } from './helpers/databases.js';
import { scratchDir } from './helpers/scratchSpace.js';

/** A port nothing listens on (bound once, then released). */
async function closedPort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as { port: number }).port;
  probe.close();
  await once(probe, 'close');
  return port;
}

function collect() {
  const lines: string[] = [];
  return { lines, out: { write: (line: string) => lines.push(line) } as unknown as NodeJS.WritableStream };
}

// METRICS_PORT off: test files run in parallel, and the default 9464 is one port for all of them.
const quiet = { LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1', METRICS_PORT: 'off' };

t.test(
  'database down at start: listens, /healthz 200 and /readyz 503 while retrying, then one clear error',
  async (t) => {
    const port = await closedPort();
    const probes: Array<Promise<[number, number]>> = [];
    // Long enough that the probes are answered before it runs out on a busy machine.
    const started = startServer(
      { ...quiet, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/app`, DATABASE_STARTUP_TIMEOUT_MS: '10000' },
      collect().out,
      {
        onListening(address) {
          probes.push(
            Promise.all([
              fetch(`${address}/healthz`).then((response) => response.status),
              fetch(`${address}/readyz`).then(async (response) => {
                const body = (await response.json()) as { code: string };
                t.equal(body.code, 'service_unavailable', '/readyz answers the Error object');
                return response.status;
              }),
            ]),
          );
        },
      },
    );
    const error = await started.then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    t.same(await Promise.all(probes), [[200, 503]], 'healthy and not ready while waiting for the database');
    t.equal(error?.name, 'StartupError');
    t.match(
      error?.message,
      new RegExp(`not ready within 10 s \\(DATABASE_STARTUP_TIMEOUT_MS\\).*ECONNREFUSED 127\\.0\\.0\\.1:${port}`),
    );
    t.notMatch(error?.message, /\n/, 'one line');
  },
);

const noPostgres = await postgresUnavailableReason();

t.test('a database that does not exist: says how to create it', { skip: noPostgres ?? false }, async (t) => {
  const url = new URL(testDatabaseUrl);
  url.pathname = '/pets_missing_database';
  const error = await startServer(
    { ...quiet, DATABASE_URL: url.toString(), DATABASE_STARTUP_TIMEOUT_MS: '300' },
    collect().out,
  ).then(
    () => undefined,
    (failure: unknown) => failure as Error,
  );
  t.match(
    error?.message,
    /database "pets_missing_database" does not exist: create it \(createdb pets_missing_database/,
  );
});

t.test('a port already in use names PORT', async (t) => {
  const holder = createServer().listen(0, '127.0.0.1');
  await once(holder, 'listening');
  t.teardown(() => holder.close());
  const port = (holder.address() as { port: number }).port;
  const error = await startServer(
    { ...quiet, DATABASE_URL: `postgres://postgres@127.0.0.1:${await closedPort()}/app`, PORT: String(port) },
    collect().out,
  ).then(
    () => undefined,
    (failure: unknown) => failure as Error,
  );
  t.equal(error?.name, 'StartupError');
  t.equal(
    error?.message,
    `PORT ${port} is already in use on 127.0.0.1: stop the process using it or set PORT to a free port.`,
  );
});

t.test('a mistyped or guessable BOOTSTRAP_API_KEY stops the start in one line naming it', async (t) => {
  const key = generateApiKey();
  const mistyped = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
  for (const [bad, why] of [
    [mistyped, /checksum does not match/],
    ['a'.repeat(40), /too easy to guess/],
    ['aaaaaaaaaaaaaaaaaaaa', /fewer than 32 characters/],
  ] as const) {
    // Refused before the database is reached: this one does not exist.
    const error = await startServer(
      { ...quiet, DATABASE_URL: `postgres://postgres@127.0.0.1:${await closedPort()}/app`, BOOTSTRAP_API_KEY: bad },
      collect().out,
    ).then(
      () => undefined,
      (failure: unknown) => failure as Error & { exitCode?: number },
    );
    t.equal(error?.name, 'StartupError', why.source);
    t.equal(error?.exitCode, 2);
    t.match(error?.message, /^Invalid configuration: BOOTSTRAP_API_KEY /);
    t.match(error?.message, why);
    t.notMatch(error?.message, /\n/);
    t.notOk(error?.message.includes(bad), 'the key itself is not shown');
  }
});

t.test('an embedded database on a full disk is refused in one line', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const error = await startServer({ ...quiet, DATA_DIR: dir.path }, collect().out, { minFreeMb: 1048576 }).then(
    () => undefined,
    (failure: unknown) => failure as Error,
  );
  t.equal(error?.name, 'StartupError');
  t.match(
    error?.message,
    /^The embedded database cannot start: the disk of .* is full: [\d.]+ MB free, the embedded database needs at least 1048576 MB/,
  );
  t.notMatch(error?.message, /\n/);
});

t.test('the first start on a fresh embedded data directory logs no warning', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const lines: Array<{ level: number; msg: string; version?: string }> = [];
  const logStream = {
    write(line: string) {
      lines.push(JSON.parse(line) as { level: number; msg: string });
    },
  };
  const server = await startServer({ ...quiet, LOG_LEVEL: 'debug', DATA_DIR: dir.path }, collect().out, { logStream });
  const serving = lines.find((line) => line.msg.startsWith('serving '));
  t.ok(serving, 'its log is captured');
  // The version this tree builds (package.json, info.version) and whether contract/released/ holds it.
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const released = existsSync(new URL(`../contract/released/openapi-${version}.yaml`, import.meta.url));
  const stated = released ? version : `${version}, not yet released (last release `;
  t.ok(serving?.version?.startsWith(stated), `the start line says ${stated}: ${serving?.version}`);
  t.match(serving?.msg, `(pet-store-service ${stated}`);
  // The periodic work that starts with the app (the idempotency purge) has run once: it says so either way.
  await waitUntil({ what: 'the first idempotency purge', timeoutMs: 60_000, intervalMs: 20 }, () =>
    Promise.resolve(lines.some((line) => /idempotency key purge/.test(line.msg)) ? true : undefined),
  );
  t.equal(await server.shutdown('SIGINT'), 0);
  t.same(
    lines.filter((line) => line.level >= 40).map((line) => line.msg),
    [],
    'no warning: nothing periodic ran before the migrations',
  );
});
