import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { waitUntil } from '../../lib/instances/index.js';
import { DatabaseUnavailableError, openDatabase, type RideThroughReport } from '../../src/db/index.js';
import { auth, listAll, privatePostgres, serve } from './harness.js';
import { faultyProxy, viaProxy, type FaultyProxy } from './proxy.js';

/**
 * A transaction that fails without having touched the database (no
 * connection could be made, or a statement before COMMIT met a passing
 * outage) is tried again on a fresh connection for a bounded time
 * (src/db/rideThrough.ts): a switchover-length outage costs the client a
 * wait, not a 503; a longer one still answers the 503 Error object with
 * Retry-After; a transaction whose COMMIT was sent is never run twice.
 * The private PostgreSQL is reached through a proxy that refuses and cuts
 * connections on demand, as the balancer does while no node takes writes.
 */

async function postWithKey(api: string, name: string, key: string) {
  const response = await fetch(`${api}/pets`, {
    method: 'POST',
    headers: { ...auth, 'idempotency-key': key },
    body: JSON.stringify({ name, categoryId: 1 }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json()) as { id?: number; code?: string; status?: number; message?: string };
  return { status: response.status, body, retryAfter: response.headers.get('retry-after') };
}

/** The service (logging at info, its metrics on a free port) on a private PostgreSQL reached through a proxy. */
async function serviceThroughProxy(t: Test) {
  const { pg, url } = await privatePostgres(t);
  const proxy = await faultyProxy(pg.port);
  t.teardown(proxy.close);
  const lines: string[] = [];
  const server = await serve(
    t,
    {
      DATABASE_URL: viaProxy(url, proxy),
      DATABASE_DIRECT_URL: url,
      MIGRATE_ON_START: 'true',
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
    },
    { logStream: { write: (line: string) => void lines.push(line) } },
  );
  // Also fills the API key cache: authentication rides through an outage on it.
  t.equal((await postWithKey(server.api, 'warm-up', 'ride-warm-up')).status, 201);
  const rideThroughLines = () =>
    lines
      .map((line) => JSON.parse(line) as { msg: string; level: number; attempts?: number })
      .filter((line) => line.msg.includes('tried again through a short outage'));
  const rideThroughs = async (outcome: 'succeeded' | 'gave_up') => {
    const scrape = await (await fetch(`${server.metricsAddress!}/metrics`)).text();
    const match = new RegExp(`^pets_db_ride_throughs_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(scrape);
    return Number(match?.[1] ?? 0);
  };
  return { pg, url, proxy, server, rideThroughLines, rideThroughs };
}

/** Refuses connections now and accepts them again after ms, while request runs. */
async function outageDuring<T>(t: Test, proxy: FaultyProxy, ms: number, request: () => Promise<T>): Promise<T> {
  const before = proxy.connections();
  proxy.refuse(true);
  const pending = request();
  await sleep(ms);
  proxy.refuse(false);
  const answer = await pending;
  t.ok(proxy.connections() - before > 1, `it was tried more than once (${proxy.connections() - before} connections)`);
  return answer;
}

t.test('a switchover-length outage (connections cut and refused for 1.5 s): 201, no 503', async (t) => {
  const { proxy, server, rideThroughLines, rideThroughs } = await serviceThroughProxy(t);
  const answer = await outageDuring(t, proxy, 1500, () => postWithKey(server.api, 'through the outage', 'ride-1'));
  t.equal(answer.status, 201, `the request waited the outage out: ${JSON.stringify(answer.body)}`);
  t.equal((await listAll(server.api)).filter((pet) => pet.name === 'through the outage').length, 1, 'one pet');
  t.match(rideThroughLines(), [{ level: 30, msg: /succeeded/ }], 'one info line');
  t.equal(await rideThroughs('succeeded'), 1, 'counted: pets_db_ride_throughs_total{outcome="succeeded"}');
});

t.test('a read during a switchover-length outage: 200, no 503', async (t) => {
  const { proxy, server, rideThroughs } = await serviceThroughProxy(t);
  const answer = await outageDuring(t, proxy, 1500, () =>
    fetch(`${server.api}/pets?limit=5`, { headers: auth, signal: AbortSignal.timeout(30_000) }),
  );
  t.equal(answer.status, 200, 'the read waited the outage out');
  t.equal(await rideThroughs('succeeded'), 1, 'counted');
});

t.test('a primary read-only for a moment (25006 before COMMIT): ridden through, 201', async (t) => {
  const { pg, proxy, server } = await serviceThroughProxy(t);
  await pg.query('ALTER DATABASE pets SET default_transaction_read_only = on');
  // New sessions read the setting: end the service's, which it replaces.
  await pg.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'pets' AND pid <> pg_backend_pid()",
  );
  const before = proxy.connections();
  const pending = postWithKey(server.api, 'after read-only', 'ride-2');
  await waitUntil({ what: 'the service meeting the read-only primary', timeoutMs: 10_000 }, async () =>
    proxy.connections() - before > 1 ? true : undefined,
  );
  await pg.query('ALTER DATABASE pets RESET default_transaction_read_only');
  const answer = await pending;
  t.equal(answer.status, 201, `the request waited until writes were accepted: ${JSON.stringify(answer.body)}`);
  t.equal((await listAll(server.api)).filter((pet) => pet.name === 'after read-only').length, 1, 'one pet');
});

t.test('an outage longer than the budget: the 503 Error object with Retry-After', async (t) => {
  const { proxy, server, rideThroughLines, rideThroughs } = await serviceThroughProxy(t);
  const before = proxy.connections();
  proxy.refuse(true);
  const answer = await postWithKey(server.api, 'too long', 'ride-3');
  const attempts = proxy.connections() - before;
  proxy.refuse(false);
  t.equal(answer.status, 503);
  t.same(answer.body, { code: 'service_unavailable', message: answer.body.message, status: 503 }, 'the Error object');
  t.ok(Number(answer.retryAfter) > 0, 'with Retry-After');
  t.ok(attempts > 1, `after trying more than once (${attempts} connections)`);
  t.match(rideThroughLines(), [{ level: 40, msg: /gave up/ }], 'one warn line');
  t.equal(await rideThroughs('gave_up'), 1, 'counted: pets_db_ride_throughs_total{outcome="gave_up"}');
  t.equal((await postWithKey(server.api, 'too long', 'ride-3')).status, 201, 'the retry with its key creates it');
  t.equal((await listAll(server.api)).filter((pet) => pet.name === 'too long').length, 1, 'once');
});

t.test('in the database layer', async (t) => {
  const { pg, url } = await privatePostgres(t);
  await pg.query('CREATE TABLE writes (id serial PRIMARY KEY)', 'pets');
  const proxy = await faultyProxy(pg.port);
  t.teardown(proxy.close);
  const reports: RideThroughReport[] = [];
  const db = await openDatabase({
    url: viaProxy(url, proxy),
    poolSize: 2,
    onRideThrough: (report) => reports.push(report),
  });
  t.teardown(() => db.close());
  const rows = async () => Number((await pg.query<{ n: string }>('SELECT count(*) AS n FROM writes', 'pets'))[0]?.n);
  const insert = { text: 'INSERT INTO writes DEFAULT VALUES' };

  await t.test('a ridden-through transaction is reported once, as succeeded', async (t) => {
    reports.length = 0;
    await db.transaction((tx) => tx.query(insert));
    await outageDuring(t, proxy, 500, () => db.transaction((tx) => tx.query(insert)));
    t.equal(reports.length, 1);
    t.match(reports[0], { outcome: 'succeeded', reason: String });
    t.ok((reports[0]?.attempts ?? 0) > 1, `after ${reports[0]?.attempts} attempts`);
  });

  await t.test('a lost COMMIT acknowledgement is not tried again: the work ran once', async (t) => {
    reports.length = 0;
    const before = await rows();
    let runs = 0;
    proxy.arm();
    const error = await db
      .transaction(async (tx) => {
        runs += 1;
        await tx.query(insert);
      })
      .catch((failure: unknown) => failure);
    t.equal(proxy.dropped(), 1, 'the COMMIT went through and its answer was dropped');
    t.type(error, DatabaseUnavailableError, 'the caller hears the failure');
    t.equal(runs, 1, 'the work ran once');
    t.equal((await rows()) - before, 1, 'one row: committed once, never twice');
    t.same(reports, [], 'nothing ridden through');
  });

  await t.test('once shutdown cancels the work in flight, nothing is tried again', async (t) => {
    reports.length = 0;
    const before = await rows();
    const connections = proxy.connections();
    proxy.refuse(true);
    const pending = db.transaction((tx) => tx.query(insert)).catch((failure: unknown) => failure);
    await waitUntil({ what: 'a first failed attempt', timeoutMs: 60_000 }, async () =>
      proxy.connections() > connections ? true : undefined,
    );
    await db.cancelInFlight();
    proxy.refuse(false);
    t.type(await pending, DatabaseUnavailableError, 'the transaction failed instead of being run again');
    t.equal(await rows(), before, 'nothing written');
    t.match(reports, [{ outcome: 'gave up' }]);
  });
});
