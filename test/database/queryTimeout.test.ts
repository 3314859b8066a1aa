import t, { type Test } from 'tap';
import { DatabaseUnavailableError, openDatabase, type Database } from '../../src/db/index.js';
import { createScratchPostgres, postgresUnavailableReason } from '../helpers/databases.js';

// queryTimeoutMs bounds each statement's answer, on the pool and
// inside a transaction; a late connection is dropped, never reused.
const noPostgres = await postgresUnavailableReason();
const sleep = (seconds: number) => ({ text: `SELECT pg_sleep(${seconds})` });

async function open(t: Test, queryTimeoutMs: number): Promise<Database> {
  const scratch = await createScratchPostgres();
  const db = await openDatabase({ url: scratch.url, poolSize: 2, queryTimeoutMs, onPoolError: () => undefined });
  t.teardown(async () => {
    await db.close();
    await scratch.drop();
  });
  return db;
}

// The late statement's length, and a ceiling on giving up well short of it that a busy machine stays under.
const lateSeconds = 60;
const ceilingMs = 30_000;

async function timeOf<T>(work: () => Promise<T>): Promise<{ ms: number; outcome: unknown }> {
  const started = performance.now();
  const outcome = await work().catch((error: unknown) => error);
  return { ms: performance.now() - started, outcome };
}

t.test('a statement answered later than the query timeout', { skip: noPostgres ?? false }, async (t) => {
  const db = await open(t, 200);
  await t.test('on the pool: 503 reason within the bound, the connection dropped', async (t) => {
    const { ms, outcome } = await timeOf(() => db.query(sleep(lateSeconds)));
    t.type(outcome, DatabaseUnavailableError);
    t.equal((outcome as DatabaseUnavailableError).reason, 'no answer within the query timeout');
    t.ok(ms >= 190 && ms < ceilingMs, `gave up after ${Math.round(ms)} ms`);
    t.equal(db.poolStatus()?.total, 0, 'the late connection left the pool');
    t.same((await db.query<{ one: number }>({ text: 'SELECT 1 AS one' })).rows, [{ one: 1 }], 'the next one works');
  });
  await t.test('in a transaction: the same, and the transaction does not commit', async (t) => {
    await db.execScript('CREATE TABLE marks (id int)');
    const { ms, outcome } = await timeOf(() =>
      db.transaction(async (tx) => {
        await tx.query({ text: 'INSERT INTO marks VALUES (1)' });
        await tx.query(sleep(lateSeconds));
      }),
    );
    t.type(outcome, DatabaseUnavailableError);
    t.equal((outcome as DatabaseUnavailableError).reason, 'no answer within the query timeout');
    t.ok(ms < ceilingMs, `gave up after ${Math.round(ms)} ms`);
    const marks = await db.query<{ n: number }>({ text: 'SELECT count(*) AS n FROM marks' });
    t.equal(marks.rows[0]?.n, 0, 'rolled back');
  });
  await t.test('a statement within the bound is answered', async (t) => {
    t.same((await db.query<{ ok: boolean }>({ text: 'SELECT true AS ok FROM pg_sleep(0.05)' })).rows, [{ ok: true }]);
  });
});

t.test('queryTimeoutMs 0 sets no bound', { skip: noPostgres ?? false }, async (t) => {
  const db = await open(t, 0);
  const { outcome } = await timeOf(() => db.query(sleep(0.4)));
  t.notOk(outcome instanceof Error, 'a 400 ms statement is answered');
});
