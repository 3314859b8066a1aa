import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { openDatabase } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrations.js';
import { startTestApp, testConfig, testLimits } from '../helpers/app.js';
import { createScratchPostgres, postgresUnavailableReason } from '../helpers/databases.js';
import { TcpProxy } from '../helpers/tcpProxy.js';

t.test('probes need no key and are outside the contract', async (t) => {
  const { app } = await startTestApp(t, 'embedded');
  const health = await app.inject({ method: 'GET', url: '/healthz' });
  t.equal(health.statusCode, 200);
  t.same(health.json(), { status: 'ok' });
  const ready = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 200, 'the embedded database is migrated, so the service is ready');
  t.equal(ready.json().status, 'ready');
  t.equal((await app.inject({ method: 'GET', url: '/v1/healthz' })).statusCode, 404, 'not under /v1');
  const spec = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
    paths: Record<string, unknown>;
  };
  t.notOk(
    Object.keys(spec.paths).some((path) => /healthz|readyz/.test(path)),
    'not in the published spec',
  );
});

const noPostgres = await postgresUnavailableReason();

t.test('readiness follows PostgreSQL going away and coming back', { skip: noPostgres ?? false }, async (t) => {
  const scratch = await createScratchPostgres();
  t.teardown(() => scratch.drop());
  const target = new URL(scratch.url);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.open();
  t.teardown(() => proxy.close());
  const viaProxy = new URL(scratch.url);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  const db = await openDatabase({ url: viaProxy.toString(), poolSize: 2, onPoolError: () => undefined });
  await migrate(db);
  const app = await buildApp(testConfig, { db, logger: false, limits: { ...testLimits, readinessMaxAgeMs: 0 } });
  t.teardown(async () => {
    await app.close();
    await db.close();
  });

  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'ready while the database answers');

  await proxy.close();
  const down = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(down.statusCode, 503, 'not ready while the database is unreachable');
  t.same(down.json(), { code: 'service_unavailable', message: down.json().message, status: 503 }, 'the Error object');
  t.equal(
    (await app.inject({ method: 'GET', url: '/healthz' })).statusCode,
    200,
    'still alive: restarting would not help',
  );

  await proxy.open();
  const back = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(back.statusCode, 200, 'ready again once the database is back');
});

t.test('readiness says 503 while the schema is behind', { skip: noPostgres ?? false }, async (t) => {
  const scratch = await createScratchPostgres();
  t.teardown(() => scratch.drop());
  const db = await openDatabase({ url: scratch.url, poolSize: 2 });
  const app = await buildApp(testConfig, { db, logger: false, limits: { ...testLimits, readinessMaxAgeMs: 0 } });
  t.teardown(async () => {
    await app.close();
    await db.close();
  });
  const behind = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(behind.statusCode, 503);
  t.equal(behind.json().code, 'service_unavailable');
  t.match(behind.json().message, /schema is at version 0 .*npm run migrate/);
  await migrate(db);
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'ready once migrated');
});

t.test(
  '/readyz tells anyone only ready or not, where reads go and each replica state: no host, driver text or pool',
  { skip: noPostgres ?? false },
  async (t) => {
    const scratch = await createScratchPostgres();
    t.teardown(() => scratch.drop());
    // A replica whose role does not exist: the driver says so, in words that name the role.
    const replica = new URL(scratch.url);
    replica.username = 'reader';
    const db = await openDatabase({
      url: scratch.url,
      poolSize: 2,
      replicas: { urls: [replica.toString()], maxLagSeconds: 1, checkIntervalMs: 50 },
      onPoolError: () => undefined,
    });
    await migrate(db);
    const app = await buildApp(testConfig, { db, logger: false, limits: { ...testLimits, readinessMaxAgeMs: 0 } });
    t.teardown(async () => {
      await app.close();
      await db.close();
    });
    for (
      const started = Date.now();
      Date.now() - started < 60_000 && !/^unreachable/.test(db.readStatus().replicas[0]?.state ?? '');
    ) {
      await sleep(50);
    }
    t.match(db.readStatus().replicas[0]?.state, /role "reader" does not exist/, 'the driver said why');

    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    t.equal(ready.statusCode, 200, 'a broken replica does not make the instance unready');
    t.same(ready.json(), { status: 'ready', reads: 'primary', replicas: ['unreachable'] });
    const database = scratch.url.slice(scratch.url.lastIndexOf('/') + 1);
    for (const secret of ['reader', database, replica.port || '5432', '127.0.0.1', 'pool', 'idle']) {
      t.notOk(ready.body.includes(secret), `the body does not show ${secret}`);
    }
  },
);
