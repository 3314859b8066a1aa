import { readFileSync } from 'node:fs';
import t from 'tap';
import { isAlive, signal, statFields } from '../../lib/instances/processes.js';
import { scrapeAnswerMs } from '../../src/observability/clusterMetrics.js';
import { replaceAfterMs } from '../../src/process/workerHealth.js';
import { openBackend, postgresUnavailableReason } from '../helpers/databases.js';
import { sample } from '../helpers/metrics.js';
import { counterSamples, droppedCounters, requestOnce, scrapeTimeoutMs, startCluster } from './liveCluster.js';

/**
 * Live, under `--cluster` with two workers, one stopped with SIGSTOP (hung
 * as a process can be: swapped out, stuck in a loop, frozen by a debugger):
 * - every scrape of the primary answers 200 within Prometheus's scrape
 *   timeout, with the stopped worker's last counters and
 *   pets_cluster_workers_unresponsive 1;
 * - no request on a new connection waits on it: each is answered 200 by the
 *   other worker, none waits until the stopped one is replaced;
 * - the primary kills it after its bound and forks another, which serves.
 */

const unavailable = await postgresUnavailableReason();

const listed = (scrape: string) =>
  sample(scrape, 'http_server_request_duration_seconds_count{operation="listPets",method="GET",status_code="200"}') ??
  0;

t.test('a stopped worker blacks out nothing and is replaced', { skip: unavailable ?? false }, async (t) => {
  const backend = await openBackend('postgres');
  const databaseUrl = backend.env['DATABASE_URL']!;
  await backend.db.close();
  t.teardown(async () => {
    await backend.close().catch(() => undefined);
  });
  const cluster = await startCluster(t, { databaseUrl, workers: 2 });
  const [victim] = await cluster.settled(2);
  // Both workers count some requests first, so that the stopped one's counters are in the sum.
  for (let batch = 0; batch < 4; batch++)
    await Promise.all(Array.from({ length: 10 }, () => requestOnce(cluster, '/v1/pets', scrapeTimeoutMs)));
  const before = await cluster.scrape();
  t.equal(sample(before, 'pets_cluster_workers_unresponsive'), 0, 'no worker unresponsive at first');

  signal(victim!, 'SIGSTOP');
  t.teardown(() => {
    if (isAlive(victim!)) signal(victim!, 'SIGKILL');
  });
  await cluster.wait('the worker stopped', () => Promise.resolve(statFields(victim!)?.[0] === 'T' || undefined));

  // Requests on new connections, while it is stopped: none may wait for it (an answer within the time
  // the primary takes to replace it, and, as it holds the connection, it would wait past that).
  const outcomes = [];
  for (let batch = 0; batch < 4; batch++)
    outcomes.push(
      ...(await Promise.all(Array.from({ length: 10 }, () => requestOnce(cluster, '/v1/pets', replaceAfterMs)))),
    );
  t.equal(statFields(victim!)?.[0], 'T', 'the worker was still stopped after the requests');
  t.same(
    outcomes.filter((outcome) => !('status' in outcome) || outcome.status !== 200),
    [],
    `all ${outcomes.length} requests on new connections answered 200 by the running worker`,
  );

  // Every scrape answers (scrape() throws otherwise); the stopped worker shows as unresponsive.
  let scrapes = 0;
  let slowestMs = 0;
  const stale = await cluster.wait('a scrape showing the stopped worker as unresponsive', async () => {
    const startedAt = performance.now();
    const scrape = await cluster.scrape();
    slowestMs = Math.max(slowestMs, performance.now() - startedAt);
    scrapes += 1;
    return sample(scrape, 'pets_cluster_workers_unresponsive') === 1 ? scrape : undefined;
  });
  t.comment(
    `${scrapes} scrapes with a stopped worker, the slowest ${Math.round(slowestMs)} ms (bound ${scrapeAnswerMs} ms)`,
  );
  t.ok(isAlive(victim!), 'the worker was still there at that scrape');
  t.same(droppedCounters(counterSamples(before), counterSamples(stale)), [], "the stopped worker's counters stay");
  t.equal(listed(stale), listed(before) + 40, 'the sum counts every request, the stopped worker’s by its last values');
  t.equal(sample(stale, 'pets_ready'), 1, 'the host is ready: a worker serves');
  t.equal(sample(stale, 'pets_cluster_workers_ready'), 1);

  const replaced = await cluster.wait('the stopped worker killed and another forked, ready', async () => {
    const pids = cluster.workers();
    if (isAlive(victim!) || pids.length !== 2) return undefined;
    const scrape = await cluster.scrape();
    return sample(scrape, 'pets_cluster_workers_ready') === 2 ? scrape : undefined;
  });
  t.equal(sample(replaced, 'pets_cluster_workers_unresponsive'), 0, 'no worker unresponsive once it is replaced');
  t.same(droppedCounters(counterSamples(stale), counterSamples(replaced)), [], 'no counter went down');
  t.match(readFileSync(cluster.logFile, 'utf8'), `worker ${victim} has not answered for`, 'the primary says why');
});
