import pg from 'pg';
import t from 'tap';
import { createPet, privatePostgres, serve, waitFor } from './harness.js';

t.test('SHUTDOWN_TIMEOUT_MS bounds the exit with the pets table locked; cut writes never commit', async (t) => {
  const { pg: cluster, url } = await privatePostgres(t);
  const server = await serve(t, { DATABASE_URL: url, MIGRATE_ON_START: 'true', SHUTDOWN_TIMEOUT_MS: '1500' });
  const locker = new pg.Client({ connectionString: url });
  await locker.connect();
  t.teardown(() => locker.end().catch(() => undefined));
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');

  const posts = [0, 1, 2, 3, 4].map((n) => createPet(server.api, `cut-${n}`));
  // The five inserts wait for the lock once the server shows them.
  const waitingForLock = async () => {
    const rows = await cluster.query<{ waiting: string }>(
      "SELECT count(*) AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = 'pets'",
    );
    return Number(rows[0]?.waiting);
  };
  await waitFor('five inserts waiting for the lock', 60_000, async () => (await waitingForLock()) >= 5);

  const started = Date.now();
  const shutdown = server.shutdown('SIGTERM');
  const bound = new Promise<'late'>((resolve) =>
    setTimeout(() => {
      resolve('late');
    }, 60_000).unref(),
  );
  const outcome = await Promise.race([shutdown.then(() => 'done' as const), bound]);
  const elapsed = Date.now() - started;
  await locker.query('ROLLBACK');
  await shutdown;
  t.equal(outcome, 'done', `shut down within the bound (${elapsed} ms for SHUTDOWN_TIMEOUT_MS=1500)`);
  const answers = await Promise.all(posts);
  t.same(
    answers.map((answer) => answer.status),
    [0, 0, 0, 0, 0],
    'the clients were cut',
  );
  // Once the server's sessions are gone, each cut insert has ended one way or the other.
  const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
  await waitFor("the server's sessions ended", 60_000, async () => {
    const rows = await cluster.query<{ others: string }>(
      `SELECT count(*) AS others FROM pg_stat_activity WHERE datname = 'pets' AND pid <> pg_backend_pid() AND pid <> ${Number(lockerPid)}`,
    );
    return Number(rows[0]?.others) === 0;
  });
  const rows = await cluster.query<{ count: string }>("SELECT count(*) FROM pets WHERE name LIKE 'cut-%'", 'pets');
  t.equal(Number(rows[0]?.count), 0, 'none of the cut writes committed after the lock was released');
});
