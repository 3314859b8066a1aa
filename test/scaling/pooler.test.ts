import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import pg from 'pg';
import t, { type Test } from 'tap';
import { generateApiKey } from '../../src/auth/keys.js';
import {
  deployPgBouncerIni,
  missingPackages,
  startPgBouncer,
  type PgBouncerServer,
} from '../../lib/instances/index.js';
import { openDatabase, type Database, type PostgresOptions } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrations.js';
import { startServer } from '../helpers/server.js';
import { createScratchPostgres, postgresUnavailableReason, type ScratchDatabase } from '../helpers/databases.js';
import { startLoggedApp, type LoggedApp } from '../helpers/loggedApp.js';

/**
 * Working behind a transaction pooler: unnamed statements, bounded waits,
 * and the pooler's errors as 503 Error objects with one log line.
 */

const noPostgres = await postgresUnavailableReason();
const noPgBouncer = missingPackages().includes('pgbouncer')
  ? 'pgbouncer is not installed (as root: apt-get install -y pgbouncer)'
  : undefined;

async function migratedScratch(t: Test): Promise<ScratchDatabase> {
  const scratch = await createScratchPostgres();
  t.teardown(() => scratch.drop());
  const db = await openDatabase({ url: scratch.url, poolSize: 1 });
  await migrate(db);
  await db.close();
  return scratch;
}

async function open(t: Test, options: PostgresOptions): Promise<Database> {
  const db = await openDatabase({ onPoolError: () => undefined, ...options });
  t.teardown(() => db.close());
  return db;
}

/** The reasons of the 'database unavailable' lines logged so far. */
/** Runs `work` while an open transaction keeps PgBouncer's only server connection. */
async function whileServerConnectionHeld<T>(t: Test, url: string, work: () => Promise<T>): Promise<T> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  t.teardown(() => holder.end());
  await holder.query('BEGIN');
  await holder.query('SELECT 1');
  try {
    return await work();
  } finally {
    await holder.query('ROLLBACK');
  }
}

function unavailableLines(app: LoggedApp): string[] {
  return app
    .logs()
    .filter((line) => line['msg'] === 'database unavailable')
    .map((line) => String(line['reason']));
}

t.test('statements on the wire', { skip: noPostgres ?? false }, async (t) => {
  const scratch = await migratedScratch(t);
  for (const statements of ['named', 'unnamed'] as const) {
    await t.test(statements, async (t) => {
      // One connection: whatever was prepared, it is on that one.
      const db = await open(t, { url: scratch.url, poolSize: 1, statements });
      const { app, auth } = await startLoggedApp(t, db);
      const created = await app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: auth,
        payload: { name: 'Rex', categoryId: 1 },
      });
      t.equal(created.statusCode, 201);
      const id = (created.json() as { id: number }).id;
      t.equal((await app.inject({ url: `/v1/pets/${id}`, headers: auth })).statusCode, 200);
      t.equal((await app.inject({ url: '/v1/pets?limit=5', headers: auth })).statusCode, 200);
      const { rows } = await db.query<{ name: string }>({ text: 'SELECT name FROM pg_prepared_statements' });
      const names = rows.map((row) => row.name).sort();
      if (statements === 'named') {
        const expected = ['api_keys.active_by_hash', 'pets.insert', 'pets.list_after', 'pets.select_by_id'];
        t.ok(
          expected.every((name) => names.includes(name)),
          `prepared: ${names.join(', ')}`,
        );
      } else {
        t.same(names, [], 'no named prepared statement exists on the connection');
      }
    });
  }
});

t.test('a request that gets no pool connection in time answers 503', { skip: noPostgres ?? false }, async (t) => {
  const scratch = await migratedScratch(t);
  const db = await open(t, { url: scratch.url, poolSize: 1, acquireTimeoutMs: 200 });
  const logged = await startLoggedApp(t, db);
  let release = () => {};
  const held = db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
  const res = await logged.app.inject({ url: '/v1/pets', headers: logged.auth });
  release();
  await held;
  t.equal(res.statusCode, 503);
  t.same(res.json(), { code: 'service_unavailable', message: res.json().message, status: 503 });
  t.same(unavailableLines(logged), ['no connection within the acquire timeout'], 'one line, with the reason');
  t.equal((await logged.app.inject({ url: '/v1/pets', headers: logged.auth })).statusCode, 200, 'served again');
});

t.test('through PgBouncer in transaction mode', { skip: noPostgres ?? noPgBouncer ?? false }, async (t) => {
  const scratch = await migratedScratch(t);
  const database = new URL(scratch.url).pathname.slice(1);
  // One server connection, no reserve: every client shares it and queues for it.
  const bouncer: PgBouncerServer = await startPgBouncer({
    backend: { port: Number(new URL(scratch.url).port || 5432) },
    database,
    settings: { default_pool_size: 1, reserve_pool_size: 0, query_wait_timeout: 2 },
  });
  t.teardown(() => bouncer.remove());

  await t.test('it reads a copy of deploy/pgbouncer.ini in its own folder, so any checkout works', async (t) => {
    // A private checkout's folder (0700, root's) is not readable by the account PgBouncer runs as.
    const included = /^%include (.+)$/m.exec(readFileSync(bouncer.configFile, 'utf8'))?.[1] ?? '';
    t.equal(dirname(included), bouncer.folder, 'the included file is in the instance folder');
    t.equal(readFileSync(included, 'utf8'), readFileSync(deployPgBouncerIni, 'utf8'), 'and is the repo file');
  });

  async function burst(logged: LoggedApp): Promise<Record<number, number>> {
    const created = await logged.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: logged.auth,
      payload: { name: 'Burst', categoryId: 2 },
    });
    const id = created.statusCode === 201 ? (created.json() as { id: number }).id : 1;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        logged.app.inject({ url: index % 2 ? `/v1/pets/${id}` : '/v1/pets?limit=3', headers: logged.auth }),
      ),
    );
    const statuses: Record<number, number> = {};
    for (const answer of [created, ...answers]) statuses[answer.statusCode] = (statuses[answer.statusCode] ?? 0) + 1;
    return statuses;
  }

  await t.test('named statements collide there: 503, never 500, each logged', async (t) => {
    const db = await open(t, { url: bouncer.url, poolSize: 5 });
    const logged = await startLoggedApp(t, db);
    const statuses = await burst(logged);
    t.notOk(statuses[500], `no 500 (${JSON.stringify(statuses)})`);
    t.ok((statuses[503] ?? 0) > 0, `prepared statements collided (${JSON.stringify(statuses)})`);
    t.ok(
      Object.keys(statuses).every((status) => ['200', '201', '503'].includes(status)),
      'only answers and 503s',
    );
    const lines = unavailableLines(logged);
    t.equal(lines.length, statuses[503], 'one log line per 503');
    t.ok(
      lines.every((line) => /prepared statement/.test(line)),
      `the line names the cause: ${lines[0]}`,
    );
  });

  await t.test('unnamed statements work', async (t) => {
    const db = await open(t, {
      url: bouncer.url,
      poolSize: 5,
      statements: 'unnamed',
    });
    const statuses = await burst(await startLoggedApp(t, db));
    t.same(statuses, { 200: 20, 201: 1 });
  });

  await t.test('a statement queued in the pooler is bounded by the query timeout', async (t) => {
    const url = bouncer.url;
    const db = await open(t, { url, poolSize: 2, statements: 'unnamed', queryTimeoutMs: 300 });
    const logged = await startLoggedApp(t, db);
    t.equal((await logged.app.inject({ url: '/v1/pets', headers: logged.auth })).statusCode, 200, 'served');
    const res = await whileServerConnectionHeld(t, url, () =>
      logged.app.inject({ url: '/v1/pets', headers: logged.auth }),
    );
    t.equal(res.statusCode, 503);
    t.equal(res.json().code, 'service_unavailable');
    t.same(unavailableLines(logged), ['no answer within the query timeout']);
    t.equal((await logged.app.inject({ url: '/v1/pets', headers: logged.auth })).statusCode, 200, 'served again');
  });

  await t.test("the pooler's own refusal (query_wait_timeout) answers 503", async (t) => {
    const url = bouncer.url;
    const db = await open(t, { url, poolSize: 2, statements: 'unnamed' });
    const logged = await startLoggedApp(t, db);
    t.equal((await logged.app.inject({ url: '/v1/pets', headers: logged.auth })).statusCode, 200, 'served');
    const res = await whileServerConnectionHeld(t, url, () =>
      logged.app.inject({ url: '/v1/pets', headers: logged.auth }),
    );
    t.equal(res.statusCode, 503);
    const lines = unavailableLines(logged);
    t.equal(lines.length, 1);
    t.match(lines[0], /the pooler refused the work/);
    const line = logged.logs().find((entry) => entry['msg'] === 'database unavailable');
    t.match(line?.['detail'], /query_wait_timeout/, "the pooler's own words are in the line");
  });

  await t.test('a login the pooler refuses (max_client_conn) answers 503', async (t) => {
    const crowded = await startPgBouncer({
      backend: { port: Number(new URL(scratch.url).port || 5432) },
      database,
      settings: { max_client_conn: 2 },
    });
    t.teardown(() => crowded.remove());
    const db = await open(t, { url: crowded.url, poolSize: 6, statements: 'unnamed' });
    const logged = await startLoggedApp(t, db);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => logged.app.inject({ url: '/v1/pets', headers: logged.auth })),
    );
    const statuses = answers.map((answer) => answer.statusCode);
    t.notOk(statuses.includes(500), `no 500 (${statuses.join(' ')})`);
    t.ok(statuses.includes(503), 'connections past max_client_conn were refused');
    const refused = logged.logs().filter((line) => line['msg'] === 'database unavailable');
    t.equal(refused.length, statuses.filter((status) => status === 503).length, 'one line per 503');
    t.match(refused[0], { reason: 'the pooler refused the work', detail: /max_client_conn/ });
  });

  await t.test('the server migrates through DATABASE_DIRECT_URL and serves through the pooler', async (t) => {
    const fresh = await createScratchPostgres();
    t.teardown(() => fresh.drop());
    const freshName = new URL(fresh.url).pathname.slice(1);
    const freshBouncer = await startPgBouncer({
      backend: { port: Number(new URL(fresh.url).port || 5432) },
      database: freshName,
    });
    t.teardown(() => freshBouncer.remove());
    const key = generateApiKey();
    const server = await startServer(
      {
        PORT: '0',
        METRICS_PORT: 'off',
        LOG_LEVEL: 'silent',
        DATABASE_URL: freshBouncer.url,
        DATABASE_STATEMENTS: 'unnamed',
        DATABASE_DIRECT_URL: fresh.url,
        MIGRATE_ON_START: 'true',
        BOOTSTRAP_API_KEY: key,
        API_KEY_CACHE_SECONDS: '300',
      },
      { write: () => true } as unknown as NodeJS.WritableStream,
    );
    t.teardown(() => server.shutdown('SIGINT'));
    const status = async () =>
      (await fetch(`${server.address}/v1/pets`, { headers: { authorization: `Bearer ${key}` } })).status;
    t.equal(await status(), 200);
    // Key changes are heard on the direct URL: a revocation acts before the 300 s cache ends.
    const direct = new pg.Client({ connectionString: fresh.url });
    await direct.connect();
    t.teardown(() => direct.end());
    await direct.query('UPDATE api_keys SET revoked_at = now()');
    const revokedAt = Date.now();
    // A generous ceiling for a busy machine, still far below the cache's 300 s.
    while ((await status()) !== 401 && Date.now() - revokedAt < 60_000) await new Promise((r) => setTimeout(r, 10));
    t.equal(await status(), 401, `the revoked key refused after ${Date.now() - revokedAt} ms`);
  });
});
