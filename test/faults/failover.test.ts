import t from 'tap';
import { startReplica, waitForReplay, waitUntil } from '../../lib/instances/index.js';
import { auth, call, createPet, listAll, privatePostgres, serve, type Answer } from './harness.js';
import { faultyProxy, viaProxy } from './proxy.js';
import { keyChangesApplicationName } from '../../src/db/keyChanges.js';

/**
 * What the service does while its primary fails over, against a private
 * PostgreSQL the test can kill, restart or turn read-only: every database
 * refusal is a 503 Error object with Retry-After (never a 500), the
 * connection that met it is dropped, /readyz says writes are unavailable,
 * the pool recovers by itself, and a createPet whose COMMIT acknowledgement
 * was lost is created once however often it is retried with its key.
 */

function isRetryable503(answer: Answer & { retryAfter?: string | null }): boolean {
  return (
    answer.status === 503 &&
    answer.body.code === 'service_unavailable' &&
    answer.body.status === 503 &&
    typeof answer.body.message === 'string'
  );
}

async function post(api: string, name: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${api}/pets`, {
    method: 'POST',
    headers: { ...auth, ...headers },
    body: JSON.stringify({ name, categoryId: 1 }),
    signal: AbortSignal.timeout(20_000),
  });
  const body = (await response.json()) as Answer['body'];
  return { status: response.status, body, headers: response.headers };
}

/** Backend pids of the service's pool connections to database pets (not the one asking, nor the key-change listener). */
async function serviceBackends(query: (sql: string) => Promise<Array<{ pid: number }>>): Promise<number[]> {
  const rows = await query(
    "SELECT pid FROM pg_stat_activity WHERE datname = 'pets' AND backend_type = 'client backend' AND pid <> pg_backend_pid()" +
      ` AND application_name <> '${keyChangesApplicationName}'`,
  );
  return rows.map((row) => row.pid).sort((a, b) => a - b);
}

t.test('a read-only primary (25006): 503 with Retry-After, the connection dropped, /readyz says so', async (t) => {
  const { pg, url } = await privatePostgres(t);
  // One connection: the request that meets the refusal uses the only one there is.
  const server = await serve(t, { DATABASE_URL: url, MIGRATE_ON_START: 'true', DATABASE_POOL_SIZE: '1' });
  t.equal((await createPet(server.api, 'before')).status, 201);
  const query = (sql: string) => pg.query<{ pid: number }>(sql, 'pets');
  const [before] = await serviceBackends(query);
  t.ok(before, 'the service holds a connection');

  await pg.query('ALTER SYSTEM SET default_transaction_read_only = on');
  await pg.query('SELECT pg_reload_conf()');
  await waitUntil({ what: 'the read-only setting reaching the backend', timeoutMs: 10_000 }, async () =>
    (await post(server.api, 'probe')).status === 503 ? true : undefined,
  );
  const refused = await post(server.api, 'while read-only');
  t.ok(isRetryable503(refused), `503 Error object: ${JSON.stringify(refused.body)}`);
  t.ok(Number(refused.headers.get('retry-after')) > 0, 'with Retry-After');
  t.notOk((await serviceBackends(query)).includes(before!), 'the connection that met the refusal was dropped');

  const ready = await call(`${server.address}/readyz`);
  t.equal(ready.status, 200, 'still ready: reads are served');
  t.match(ready.body, { status: 'ready', writes: 'unavailable' }, '/readyz says writes are unavailable');
  const listed = await fetch(`${server.api}/pets`, { headers: auth });
  t.equal(listed.status, 200, 'reads go on');

  await pg.query('ALTER SYSTEM RESET default_transaction_read_only');
  await pg.query('SELECT pg_reload_conf()');
  await waitUntil({ what: 'writes accepted again', timeoutMs: 10_000 }, async () =>
    (await post(server.api, 'after')).status === 201 ? true : undefined,
  );
  await waitUntil({ what: '/readyz without writes unavailable', timeoutMs: 10_000 }, async () => {
    const answer = await call(`${server.address}/readyz`);
    return answer.status === 200 && !('writes' in answer.body) ? true : undefined;
  });
  t.pass('writes and readiness recovered without a restart');
});

t.test('the primary killed (kill -9) and terminating sessions (57P01): 503, never 500, then recovery', async (t) => {
  const { pg, url } = await privatePostgres(t);
  const server = await serve(t, { DATABASE_URL: url, MIGRATE_ON_START: 'true', DATABASE_POOL_SIZE: '2' });
  t.equal((await createPet(server.api, 'before')).status, 201);

  await pg.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'pets' AND pid <> pg_backend_pid()",
  );
  const afterTerminate = [await post(server.api, 'a'), await post(server.api, 'b')];
  t.same(
    afterTerminate.filter((answer) => answer.status !== 201 && !isRetryable503(answer)),
    [],
    'terminated sessions: 201 (new connection) or the 503 Error object',
  );

  await pg.kill();
  const during = await post(server.api, 'during');
  t.ok(isRetryable503(during), `while the server is gone: ${during.status} ${JSON.stringify(during.body)}`);
  t.ok(Number(during.headers.get('retry-after')) > 0, 'with Retry-After');
  const notReady = await call(`${server.address}/readyz`);
  t.equal(notReady.status, 503, 'not ready: no replica serves reads either');
  t.equal(notReady.body.code, 'service_unavailable');

  await pg.restart();
  await waitUntil({ what: 'writes after the restart', timeoutMs: 30_000 }, async () =>
    (await post(server.api, 'after')).status === 201 ? true : undefined,
  );
  // /readyz answers from a probe up to httpLimits.readinessMaxAgeMs old.
  await waitUntil({ what: '/readyz ready again', timeoutMs: 10_000 }, async () =>
    (await call(`${server.address}/readyz`)).status === 200 ? true : undefined,
  );
  t.pass('ready again, without a restart of the service');
});

t.test('the primary gone while a replica streams: reads go on, /readyz stays ready, writes 503', async (t) => {
  const { pg, url } = await privatePostgres(t);
  const replica = await startReplica(pg);
  t.teardown(() => replica.remove());
  const server = await serve(t, {
    DATABASE_URL: url,
    DATABASE_READ_URL: replica.url('pets'),
    MIGRATE_ON_START: 'true',
  });
  const created = await createPet(server.api, 'replicated');
  t.equal(created.status, 201);
  await waitForReplay(pg, replica);
  await waitUntil({ what: 'reads from the replica', timeoutMs: 10_000 }, async () => {
    const answer = await call(`${server.address}/readyz`);
    return (answer.body as { reads?: string }).reads === 'replicas' ? true : undefined;
  });

  await pg.kill();
  const write = await post(server.api, 'no primary');
  t.ok(isRetryable503(write), `a write answers 503: ${JSON.stringify(write.body)}`);
  const read = await fetch(`${server.api}/pets/${created.body.id}`, { headers: auth });
  t.equal(read.status, 200, 'a read is served by the replica');
  const ready = await waitUntil({ what: '/readyz saying writes are unavailable', timeoutMs: 10_000 }, async () => {
    const answer = await call(`${server.address}/readyz`);
    return 'writes' in answer.body ? answer : undefined;
  });
  t.equal(ready.status, 200, 'the instance stays in rotation for reads');
  t.match(ready.body, { status: 'ready', writes: 'unavailable', reads: 'replicas' });
});

t.test('createPet whose COMMIT acknowledgement is lost: retried with its key, one pet', async (t) => {
  const { pg, url } = await privatePostgres(t);
  const proxy = await faultyProxy(pg.port);
  t.teardown(proxy.close);
  const server = await serve(t, {
    DATABASE_URL: viaProxy(url, proxy),
    DATABASE_DIRECT_URL: url,
    MIGRATE_ON_START: 'true',
  });
  const name = 'commit-ack-lost';
  const key = { 'idempotency-key': 'order-commit-ack-lost-1' };

  proxy.arm();
  const first = await post(server.api, name, key);
  t.equal(proxy.dropped(), 1, 'the COMMIT went through and its answer was dropped');
  // The service does not run it again itself (its outcome is unknown): the first answer is this 503.
  t.ok(isRetryable503(first), `the client got a 503 Error object: ${first.status} ${JSON.stringify(first.body)}`);
  t.ok(Number(first.headers.get('retry-after')) > 0, 'with Retry-After');

  const committed = (await listAll(server.api)).filter((pet) => pet.name === name);
  t.equal(committed.length, 1, 'the pet was committed although the client heard 503');

  const retries = await Promise.all([post(server.api, name, key), post(server.api, name, key)]);
  const replayed = retries.filter((answer) => answer.status === 201);
  t.ok(replayed.length >= 1, 'a retry answers 201');
  for (const answer of replayed) {
    t.equal(answer.body.id, committed[0]?.id, 'with the pet that was committed');
    t.equal(answer.headers.get('idempotent-replayed'), 'true', 'from the stored answer');
  }
  t.ok(
    retries.every((answer) => answer.status === 201 || answer.status === 409),
    'a retry racing the other answers 201 or 409 (in flight), nothing else',
  );
  t.equal((await listAll(server.api)).filter((pet) => pet.name === name).length, 1, 'never two pets');
});
