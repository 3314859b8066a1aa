import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { DatabaseUnavailableError, noKeyChanges, openDatabase, trackAvailability } from '../../src/db/index.js';
import { testConfig, testLimits } from '../helpers/app.js';
import { createScratchPostgres, postgresUnavailableReason } from '../helpers/databases.js';

const noPostgres = await postgresUnavailableReason();

t.test('an outage is reported once when it starts and once when it ends', async (t) => {
  let failing = true;
  const events: string[] = [];
  const db = trackAvailability(
    {
      kind: 'postgres',
      query: () =>
        failing
          ? Promise.reject(
              new DatabaseUnavailableError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
            )
          : Promise.resolve({ rows: [], rowCount: 0 }),
      execScript: () => Promise.resolve(),
      transaction: () => Promise.resolve(undefined as never),
      replica: () => undefined,
      readStatus: () => ({ reads: 'primary', replicas: [] }),
      poolStatus: () => undefined,
      read: (read) => read(),
      cancelInFlight: () => Promise.resolve(0),
      keyChanges: noKeyChanges,
      close: () => Promise.resolve(),
    },
    {
      started: (reason) => events.push(`started: ${reason}`),
      ended: (_durationMs, failed) => events.push(`ended after ${failed} failed calls`),
    },
  );
  for (let call = 0; call < 5; call += 1) await db.query({ text: 'SELECT 1' }).catch(() => undefined);
  failing = false;
  for (let call = 0; call < 3; call += 1) await db.query({ text: 'SELECT 1' });
  t.same(events, ['started: connect ECONNREFUSED', 'ended after 5 failed calls']);
});

t.test('a request during an outage: 503, one warn line without a stack', async (t) => {
  const db = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
  const lines: string[] = [];
  const app = await buildApp(
    { ...testConfig, LOG_LEVEL: 'info' },
    { db, logStream: { write: (line) => void lines.push(line) }, limits: testLimits },
  );
  t.teardown(async () => {
    await app.close();
    await db.close();
  });
  const response = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(response.statusCode, 503);
  const logged = lines.map(
    (line) => JSON.parse(line) as { level: number; msg: string; stack?: unknown; err?: unknown },
  );
  const unavailable = logged.filter((line) => line.msg === 'database unavailable');
  t.equal(unavailable.length, 1);
  t.equal(unavailable[0]?.level, 40, 'at warn');
  t.notMatch(lines.join('\n'), /"stack"/, 'no stack trace in any line');
});

t.test(
  'PostgreSQL disk_full (53100) is unavailable (503), not a statement error',
  { skip: noPostgres ?? false },
  async (t) => {
    const scratch = await createScratchPostgres();
    const db = await openDatabase({ url: scratch.url, poolSize: 1 });
    t.teardown(async () => {
      await db.close();
      await scratch.drop();
    });
    const error = await db
      .query({ text: "DO $$ BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END $$" })
      .catch((failure: unknown) => failure);
    t.type(error, DatabaseUnavailableError);
  },
);

t.test('idle pooled connections go back to the server', { skip: noPostgres ?? false }, async (t) => {
  const scratch = await createScratchPostgres();
  const db = await openDatabase({ url: scratch.url, poolSize: 3, idleTimeoutMs: 200 });
  t.teardown(async () => {
    await db.close();
    await scratch.drop();
  });
  const { migrate } = await import('../../src/db/migrations.js');
  await migrate(db);
  const app = await buildApp(testConfig, { db, logger: false, limits: testLimits });
  t.teardown(() => app.close());
  const ready = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 200);
  t.match(db.poolStatus(), { total: 1, idle: 1, waiting: 0 }, 'the probe used one connection');
  for (const started = Date.now(); Date.now() - started < 60_000 && (db.poolStatus()?.total ?? 0) > 0;) {
    await sleep(50);
  }
  t.match(db.poolStatus(), { total: 0, idle: 0, waiting: 0 }, 'the idle connection was closed');
});
