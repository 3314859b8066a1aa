import pg from 'pg';
import t from 'tap';
import { exchange } from '../../lib/instances/network.js';
import {
  isAlive,
  startPgBouncer,
  startPostgres,
  startRedis,
  startReplica,
  waitForReplay,
} from '../../lib/instances/index.js';
import { topologyTestOptions } from './harness.js';

/**
 * lib/instances on its own: what the fault and topology tests rely on
 * (a crash keeps committed data, a replica streams, a paused Redis stops
 * answering), and why the service needs unnamed statements behind
 * deploy/pgbouncer.ini's transaction pooling.
 */

t.test('lib/instances', topologyTestOptions(), async (t) => {
  const primary = await startPostgres();
  t.teardown(() => primary.remove());

  await t.test('PostgreSQL: a kill -9 keeps what was committed; a streaming replica follows', async (t) => {
    await primary.query('CREATE TABLE IF NOT EXISTS marks (id int PRIMARY KEY)');
    await primary.query('INSERT INTO marks VALUES (1), (2), (3)');
    const replica = await startReplica(primary);
    t.teardown(() => replica.remove());
    await primary.query('INSERT INTO marks VALUES (4)');
    await waitForReplay(primary, replica);
    t.same(await replica.query('SELECT count(*)::int AS n FROM marks'), [{ n: 4 }], 'the replica has every row');
    await t.rejects(replica.query('INSERT INTO marks VALUES (5)'), /read-only transaction/, 'and refuses writes');

    const crashedPid = primary.pid;
    await primary.kill();
    t.notOk(isAlive(crashedPid), 'the postmaster is gone');
    await primary.restart();
    t.not(primary.pid, crashedPid, 'restarted as a new process');
    t.same(
      await primary.query('SELECT count(*)::int AS n FROM marks'),
      [{ n: 4 }],
      'every committed row survived the crash',
    );
  });

  await t.test('Redis: paused it accepts connections but answers nothing; resumed it answers', async (t) => {
    const redis = await startRedis();
    t.teardown(() => redis.remove());
    t.match(await exchange(redis.port, 'PING\r\n', /\r\n/), /^\+PONG/, 'PONG');
    redis.pause();
    await t.rejects(exchange(redis.port, 'PING\r\n', /\r\n/, 500), /no answer/, 'no answer while stopped');
    redis.resume();
    t.match(await exchange(redis.port, 'PING\r\n', /\r\n/), /^\+PONG/, 'PONG again');
  });

  await t.test('PgBouncer with deploy/pgbouncer.ini: named statements break, unnamed ones work', async (t) => {
    await primary.query('CREATE DATABASE pooled');
    const pooler = await startPgBouncer({ backend: { port: primary.port }, database: 'pooled' });
    t.teardown(() => pooler.remove());
    const [mode] = await pooler
      .admin<{ value: string }>('SHOW CONFIG')
      .then((rows) => rows.filter((row) => (row as unknown as { key: string }).key === 'pool_mode'));
    t.equal(mode?.value, 'transaction', 'the file sets transaction pooling');

    // Two clients through the pooler, each preparing "the same" named statement
    // as the service does: in transaction mode they share server connections.
    const clients = [new pg.Client({ connectionString: pooler.url }), new pg.Client({ connectionString: pooler.url })];
    t.teardown(() => Promise.all(clients.map((client) => client.end().catch(() => undefined))));
    for (const client of clients) await client.connect();
    const errors: string[] = [];
    // One after the other: PgBouncer hands both clients the same server connection.
    for (let round = 0; round < 10; round += 1) {
      for (const client of clients) {
        await client
          .query({ name: 'pets.by_id', text: 'SELECT $1::int AS id', values: [round] })
          .catch((error: unknown) => {
            errors.push((error as { code?: string }).code ?? String(error));
          });
      }
    }
    t.ok(
      errors.length > 0,
      `named statements fail through transaction pooling (${errors.length} of 20: ${[...new Set(errors)].join(', ')})`,
    );
    t.ok(
      errors.every((code) => code === '42P05' || code === '26000'),
      'with "already exists" (42P05) or "does not exist" (26000)',
    );

    const unnamed = await Promise.all(
      Array.from({ length: 40 }, (_, round) =>
        clients[round % 2]!.query({ text: 'SELECT $1::int AS id', values: [round] }).then(
          (result) => (result.rows[0] as { id: number }).id,
        ),
      ),
    );
    t.same(
      unnamed,
      Array.from({ length: 40 }, (_, round) => round),
      'unnamed statements always work',
    );
  });
});
