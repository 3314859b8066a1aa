import t, { type Test } from 'tap';
import {
  missingPackages,
  startPostgres,
  startReplica,
  waitForReplay,
  waitUntil,
  type PostgresServer,
} from '../../lib/instances/index.js';
import { openDatabase, type Database, type ReadStatus } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrations.js';
import { lagSeconds } from '../../src/db/replicas.js';
import { parseLsn } from '../../src/db/replication.js';
import { startServer } from '../helpers/server.js';
import { startLoggedApp, type LoggedApp } from '../helpers/loggedApp.js';

/**
 * Reads from a real streaming replica (private clusters from lib/instances):
 * where listPets and getPet read, read-your-writes through the primary,
 * the lag bound, a replica going away and coming back, and a replica
 * refused as the primary.
 */

t.test('WAL positions and lag', async (t) => {
  t.equal(parseLsn('0/0'), 0n);
  t.equal(parseLsn('16/B374D848'), (0x16n << 32n) + 0xb374d848n);
  t.throws(() => parseLsn('nonsense'));
  const samples = [
    { at: 1000, lsn: 100n },
    { at: 2000, lsn: 200n },
    { at: 3000, lsn: 300n },
  ];
  t.equal(lagSeconds(samples, 300n, 3500), 0, 'replayed everything: no lag, however old');
  t.equal(lagSeconds(samples, 250n, 3500), 0.5, 'behind since the sample it lacks');
  t.equal(lagSeconds(samples, 150n, 3500), 1.5);
  t.equal(lagSeconds(samples, 50n, 3500), 2.5, 'behind all: at least since the oldest sample');
});

const noPostgres = missingPackages().includes('postgresql-15')
  ? 'PostgreSQL 15 server binaries are not installed (apt-get install -y postgresql-15)'
  : undefined;

interface Cluster {
  primary: PostgresServer;
  replica: PostgresServer;
}

async function startCluster(t: Test): Promise<Cluster> {
  const primary = await startPostgres();
  t.teardown(() => primary.remove());
  await primary.query('CREATE DATABASE pets');
  const db = await openDatabase({ url: primary.url('pets'), poolSize: 1 });
  await migrate(db);
  await db.close();
  const replica = await startReplica(primary);
  t.teardown(() => replica.remove());
  await waitForReplay(primary, replica);
  return { primary, replica };
}

/**
 * Where reads go as /readyz says it (which must be 200), with each replica's
 * state in full from the database: /readyz shows anyone only its kind.
 */
async function readStatusOf(app: LoggedApp, db: Database): Promise<ReadStatus & { status: string }> {
  const response = await app.app.inject({ url: '/readyz' });
  if (response.statusCode !== 200) throw new Error(`/readyz answered ${response.statusCode}: ${response.body}`);
  const shown = response.json<{ status: string; reads: ReadStatus['reads'] }>();
  return { ...db.readStatus(), status: shown.status, reads: shown.reads };
}

function until(app: LoggedApp, db: Database, what: string, test: (status: ReadStatus) => boolean): Promise<ReadStatus> {
  return waitUntil({ what, timeoutMs: 30_000 }, async () => {
    const status = await readStatusOf(app, db);
    return test(status) ? status : undefined;
  });
}

t.test('reads from a streaming replica', { skip: noPostgres ?? false }, async (t) => {
  const { primary, replica } = await startCluster(t);
  const changes: string[] = [];
  const db: Database = await openDatabase({
    url: primary.url('pets'),
    poolSize: 4,
    replicas: {
      urls: [replica.url('pets')],
      maxLagSeconds: 1,
      checkIntervalMs: 100,
      onChange: (state, reads) => changes.push(`${state.state} -> reads: ${reads}`),
    },
    onPoolError: () => undefined,
  });
  t.teardown(() => db.close());
  const app = await startLoggedApp(t, db);
  const { auth } = app;
  const create = async (name: string) => {
    const response = await app.app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: auth,
      payload: { name, categoryId: 3 },
    });
    t.equal(response.statusCode, 201, `created ${name}`);
    return (response.json() as { id: number }).id;
  };
  const listedIds = async () => {
    const response = await app.app.inject({ url: '/v1/pets?limit=100', headers: auth });
    t.equal(response.statusCode, 200);
    return (response.json() as Array<{ id: number }>).map((pet) => pet.id);
  };
  await waitForReplay(primary, replica);
  const healthy = await until(app, db, 'reads from the replica', (status) => status.reads === 'replicas');
  t.match(healthy.replicas, [{ replica: `127.0.0.1:${replica.port}/pets`, state: 'streaming' }]);

  await t.test('lists read the replica; getPet falls back to the primary on a miss', async (t) => {
    await replica.query('SELECT pg_wal_replay_pause()');
    const id = await create('unreplayed');
    t.notOk((await listedIds()).includes(id), 'the list comes from the replica, which has not replayed it');
    const fetched = await app.app.inject({ url: `/v1/pets/${id}`, headers: auth });
    t.equal(fetched.statusCode, 200, 'the client reads back what it created: the miss is asked of the primary');
    t.equal((await app.app.inject({ url: '/v1/pets/999999', headers: auth })).statusCode, 404, 'a true miss is 404');

    const lagging = await until(app, db, 'the replica reported lagging', (status) => status.reads === 'primary');
    t.match(lagging.replicas[0]?.state, /^lagging: [\d.]+ s behind the primary, more than 1 s allowed$/);
    t.ok((await listedIds()).includes(id), 'past the lag bound, lists read the primary');
    t.equal(changes.filter((change) => change.startsWith('lagging')).length, 1, 'reported once, not at every check');
    await replica.query('SELECT pg_wal_replay_resume()');
    await until(app, db, 'the replica back in use', (status) => status.reads === 'replicas');
    t.ok((await listedIds()).includes(id), 'replayed now');
  });

  await t.test('a replica going away costs no request; it is used again when back', async (t) => {
    const id = await create('before-stop');
    await waitForReplay(primary, replica);
    await replica.stop();
    const list = await app.app.inject({ url: '/v1/pets?limit=100', headers: auth });
    t.equal(list.statusCode, 200, 'the first read after the stop is re-run on the primary');
    t.equal((await app.app.inject({ url: `/v1/pets/${id}`, headers: auth })).statusCode, 200);
    const down = await readStatusOf(app, db);
    t.equal(down.status, 'ready', '/readyz stays 200: the primary serves every read');
    t.equal(down.reads, 'primary');
    t.match(down.replicas[0]?.state, /^unreachable: /);
    await replica.restart();
    await until(app, db, 'the restarted replica in use', (status) => status.reads === 'replicas');
  });

  await t.test('a read URL that is no replica is not read from', async (t) => {
    const standalone = await openDatabase({
      url: primary.url('pets'),
      poolSize: 1,
      replicas: { urls: [primary.url('pets')], maxLagSeconds: 1, checkIntervalMs: 100 },
    });
    t.teardown(() => standalone.close());
    const status = await waitUntil({ what: 'the first check', timeoutMs: 30_000 }, async () => {
      const state = standalone.readStatus();
      return state.replicas[0]?.state === 'not checked yet' ? undefined : state;
    });
    t.equal(status.reads, 'primary');
    t.match(status.replicas[0]?.state, /^not in recovery/);
  });

  await t.test('the service refuses a replica as its primary', async (t) => {
    await t.rejects(
      startServer(
        { PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'silent', DATABASE_URL: replica.url('pets') },
        process.stdout,
      ),
      {
        name: 'StartupError',
        message:
          /^DATABASE_URL points at a database that is a replica \(pg_is_in_recovery\(\) is true\), but the service writes there/,
      },
    );
  });
});
