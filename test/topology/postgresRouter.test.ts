import pg from 'pg';
import t from 'tap';
import { freePort, startPostgres, startPostgresRouter, startReplica, waitUntil } from '../../lib/instances/index.js';
import { topologyTestOptions } from './harness.js';

/**
 * deploy/haproxy-postgres.cfg as it runs: writes go to the node that takes
 * writes (not merely the one that is up or out of recovery), a node that
 * turns read-only leaves the route and its open connections are cut, and
 * reads go to the standbys.
 */

t.test('the route to the primary follows "takes writes"', topologyTestOptions(), async (t) => {
  const primary = await startPostgres();
  t.teardown(() => primary.remove());
  const replica = await startReplica(primary);
  t.teardown(() => replica.remove());
  const nothing = await freePort();
  // No PgBouncer here: each node's "pooler" is its PostgreSQL itself.
  const router = await startPostgresRouter({
    nodes: [primary.port, replica.port, nothing].map((port) => ({ postgresPort: port, poolerPort: port })),
  });
  t.teardown(() => router.stop());

  t.equal(await router.waitForPrimary(), 'node1', 'writes go to the primary only');
  const client = new pg.Client({ connectionString: router.primaryUrl('postgres') });
  const ended = new Promise<Error | undefined>((resolve) => {
    client.on('error', resolve);
    client.on('end', () => {
      resolve(undefined);
    });
  });
  await client.connect();
  const [row] = (await client.query<{ port: number }>('SELECT inet_server_port() AS port')).rows;
  t.equal(row?.port, primary.port, 'a connection through the route reaches the primary');
  // Every server counts as UP until its first check: wait for the standbys route's first verdicts.
  await waitUntil({ what: 'the standbys route holding the replica only', timeoutMs: 10_000 }, async () =>
    (await router.standbyNodes()).join() === 'node2' ? true : undefined,
  );
  const standby = new pg.Client({ connectionString: router.standbysUrl('postgres') });
  await standby.connect();
  const [read] = (await standby.query<{ recovering: boolean }>('SELECT pg_is_in_recovery() AS recovering')).rows;
  t.equal(read?.recovering, true, 'the standbys route reaches the replica');
  await standby.end();

  await primary.query('ALTER SYSTEM SET default_transaction_read_only = on');
  await primary.query('SELECT pg_reload_conf()');
  await waitUntil({ what: 'the read-only primary leaving the route', timeoutMs: 10_000 }, async () =>
    (await router.writableNodes()).length === 0 ? true : undefined,
  );
  t.pass('a primary that turned read-only takes no more writes through the route');
  await ended;
  t.pass('its open connection through the route was cut (on-marked-down shutdown-sessions)');

  await primary.query('ALTER SYSTEM RESET default_transaction_read_only');
  await primary.query('SELECT pg_reload_conf()');
  t.equal(await router.waitForPrimary(), 'node1', 'back once it takes writes again');
});
