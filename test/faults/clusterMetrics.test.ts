import t from 'tap';
import { isAlive, signal } from '../../lib/instances/processes.js';
import { openBackend, postgresUnavailableReason } from '../helpers/databases.js';
import { sample } from '../helpers/metrics.js';
import {
  counterSamples,
  droppedCounters,
  requestOnce,
  scrapeTimeoutMs,
  startCluster,
  type LiveCluster,
  type Outcome,
} from './liveCluster.js';
import { faultyProxy, viaProxy } from './proxy.js';

/**
 * Live, under `--cluster` with two workers:
 * - a worker killed with SIGKILL and forked again must make no summed
 *   counter of the primary's scrape go down (float `_sum`s included), and
 *   the increase Prometheus computes between the scrapes before and after
 *   (reset-aware, as rate() does) must be the requests made, not the whole
 *   count of the surviving worker taken for new traffic;
 * - a worker killed under load is replaced by one that takes no connection
 *   before it is ready: the replacement's database is held unanswered while
 *   the load goes on, and no request meets its start-up (503 "starting").
 */

/** The increase between two samples as rate() reads it: a drop is a reset, after which all of `after` is new. */
const increase = (before: number, after: number) => (after >= before ? after - before : after);

const listed = (samples: Map<string, number>) =>
  samples.get('http_server_request_duration_seconds_count{operation="listPets",method="GET",status_code="200"}') ?? 0;

const unavailable = await postgresUnavailableReason();

/** Requests from `concurrency` loops until stop() (or `most` requests, a bound whatever happens). */
function load(cluster: LiveCluster, concurrency: number, most: number) {
  const outcomes: Outcome[] = [];
  let stopped = false;
  const loops = Array.from({ length: concurrency }, async () => {
    while (!stopped && outcomes.length < most) outcomes.push(await requestOnce(cluster, '/v1/pets', scrapeTimeoutMs));
  });
  return {
    outcomes,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

t.test('a worker killed and forked again makes no summed counter drop', { skip: unavailable ?? false }, async (t) => {
  const backend = await openBackend('postgres');
  await backend.db.close();
  t.teardown(async () => {
    await backend.close().catch(() => undefined);
  });
  const databaseUrl = new URL(backend.env['DATABASE_URL']!);
  const proxy = await faultyProxy(Number(databaseUrl.port));
  t.teardown(() => proxy.close());
  // A pool of two: a worker under load keeps both open, and needs no new connection while one is held.
  const cluster = await startCluster(t, {
    databaseUrl: viaProxy(databaseUrl.toString(), proxy),
    workers: 2,
    env: { DATABASE_POOL_SIZE: '2', RATE_LIMIT_MAX: '1000000' },
  });
  let answered = 0;
  const traffic = async (count: number) => {
    for (let sent = 0; sent < count; sent += 10) {
      const batch = Array.from({ length: Math.min(10, count - sent) }, () =>
        requestOnce(cluster, '/v1/pets', scrapeTimeoutMs),
      );
      // Only 200s are counted here: a loaded machine may shed some (503), counted under their own status.
      for (const outcome of await Promise.all(batch)) if ('status' in outcome && outcome.status === 200) answered += 1;
    }
  };

  await cluster.settled(2);
  await traffic(400);
  const first = counterSamples(await cluster.scrape());
  t.equal(listed(first), answered, `the sum counts the ${answered} requests both workers answered 200`);

  const answeredBefore = answered;
  const [victim] = cluster.workers();
  signal(victim!, 'SIGKILL');
  await cluster.wait('a new worker forked in its place, ready and answering scrapes', async () => {
    const pids = cluster.workers();
    if (pids.includes(victim!) || pids.length !== 2) return undefined;
    return sample(await cluster.scrape(), 'pets_cluster_workers_ready') === 2 ? true : undefined;
  });
  // Fewer requests than the victim had counted: a drop of its share would show.
  await traffic(40);
  const second = counterSamples(await cluster.scrape());
  const after = answered - answeredBefore;
  t.same(droppedCounters(first, second), [], 'no summed counter went down, float sums included');
  t.equal(
    increase(listed(first), listed(second)),
    after,
    `Prometheus reads ${after} new requests between the scrapes, as many as were made`,
  );

  // Under load: the replacement finds its database unanswered until the load has gone on a while.
  await cluster.settled(2);
  const running = load(cluster, 8, 20_000);
  t.teardown(() => running.stop());
  await cluster.wait('both pools full', async () =>
    sample(await cluster.scrape(), 'pets_db_pool_connections') === 4 ? true : undefined,
  );
  const beforeKill = counterSamples(await cluster.scrape());
  const [loaded] = cluster.workers();
  const heldBefore = proxy.held();
  proxy.hold(true);
  signal(loaded!, 'SIGKILL');
  const sentAtHold = await cluster.wait('the replacement asking for its database', () => {
    const pids = cluster.workers();
    const forked = !isAlive(loaded!) && pids.length === 2;
    return Promise.resolve(forked && proxy.held() > heldBefore ? running.outcomes.length : undefined);
  });
  await cluster.wait('200 more requests while its database does not answer', () =>
    Promise.resolve(running.outcomes.length >= sentAtHold + 200 || undefined),
  );
  proxy.hold(false);
  await cluster.wait('the replacement ready', async () =>
    sample(await cluster.scrape(), 'pets_cluster_workers_ready') === 2 ? true : undefined,
  );
  await cluster.wait('200 more requests with both workers', () =>
    Promise.resolve(running.outcomes.length >= sentAtHold + 400 || undefined),
  );
  await running.stop();
  const afterKill = counterSamples(await cluster.scrape());

  const tally = new Map<string, number>();
  for (const outcome of running.outcomes) {
    const what = 'status' in outcome ? String(outcome.status) : outcome.error;
    tally.set(what, (tally.get(what) ?? 0) + 1);
  }
  t.comment(`outcomes of ${running.outcomes.length} requests: ${JSON.stringify(Object.fromEntries(tally))}`);
  t.same(
    running.outcomes.filter((outcome) => 'status' in outcome && /starting/i.test(outcome.message)),
    [],
    'no request met the replacement starting',
  );
  t.ok((tally.get('200') ?? 0) > 400, 'the load was served');
  t.same(droppedCounters(beforeKill, afterKill), [], 'no summed counter went down across the kill under load');
});
