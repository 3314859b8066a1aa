import t from 'tap';
import { ClusterTally, type MetricJson } from '../../src/observability/clusterMetrics.js';
import { ExactSum } from '../../src/observability/exactSum.js';
import { sample } from '../helpers/metrics.js';

/** A worker's registry as prom-client's getMetricsAsJSON gives it: a histogram's _sum and a ready gauge. */
function registry(sum: number, ready: 0 | 1, requests = 1): MetricJson[] {
  return [
    {
      name: 'pets_latency_seconds',
      help: 'h',
      type: 'histogram',
      aggregator: 'sum',
      values: [
        { metricName: 'pets_latency_seconds_sum', labels: { operation: 'listPets' }, value: sum },
        { metricName: 'pets_latency_seconds_count', labels: { operation: 'listPets' }, value: requests },
      ],
    },
    {
      name: 'pets_db_pool_connections',
      help: 'g',
      type: 'gauge',
      aggregator: 'sum',
      values: [{ labels: {}, value: 3 }],
    },
    { name: 'pets_ready', help: 'r', type: 'gauge', aggregator: 'sum', values: [{ labels: {}, value: ready }] },
  ];
}

const sumOf = async (tally: ClusterTally, fresh: number[], unresponsive = 0) =>
  sample(
    await tally.aggregate(new Set(fresh), { live: fresh.length + unresponsive, unresponsive }).metrics(),
    'pets_latency_seconds_sum{operation="listPets"}',
  );

t.test('an exact sum is the same in every order and correctly rounded', async (t) => {
  t.equal(new ExactSum().value, 0);
  t.equal(Array.from({ length: 10 }).reduce<ExactSum>((sum) => sum.add(0.1), new ExactSum()).value, 1);
  t.equal(new ExactSum().add(1e100).add(1).add(-1e100).value, 1);
  // Ties round to even: 2**53 + 1 is halfway between two doubles; the partials below it decide.
  t.equal(
    new ExactSum()
      .add(2 ** 53)
      .add(1)
      .add(1e-10).value,
    2 ** 53 + 2,
  );
  t.equal(
    new ExactSum()
      .add(2 ** 53)
      .add(1)
      .add(-1e-10).value,
    2 ** 53,
  );
  const values = [6.515929727227629, 7.887233511355132, 0.9385958677423489, 1e-9, 123.456];
  const orders = [values, [...values].reverse(), [values[2]!, values[0]!, values[4]!, values[1]!, values[3]!]];
  const sums = orders.map((order) => order.reduce((sum, value) => sum.add(value), new ExactSum()).value);
  t.same(new Set(sums).size, 1, sums.join(', '));
  const copy = new ExactSum(new ExactSum().add(0.1).add(0.2)).add(0.3);
  t.equal(copy.value, 0.6, 'a copy keeps the partials (0.1 + 0.2 + 0.3 is 0.6000000000000001 summed plainly)');
});

t.test("a float counter's sum does not drop when a worker dies, whatever the workers' order", async (t) => {
  // Three values whose plain sum depends on the order: (d + w2) + w1 > (d + w1) + w2 by one ulp.
  const [d, w1, w2] = [6.515929727227629, 7.887233511355132, 0.9385958677423489];
  t.ok(d + w2 + w1 > d + w1 + w2, 'the values are ones where order matters');
  const tally = new ClusterTally();
  tally.answered(3, registry(d, 1));
  tally.departed(3);
  tally.answered(2, registry(w2, 1));
  tally.answered(1, registry(w1, 1));
  const before = await sumOf(tally, [1, 2]);
  tally.departed(1);
  const after = await sumOf(tally, [2]);
  t.ok(after! >= before!, `${before} then ${after}`);
  t.equal(tally.departedWorkers, 2);
});

t.test('an unresponsive worker counts by its last counters, but not in gauges or readiness', async (t) => {
  const tally = new ClusterTally();
  tally.answered(1, registry(1.5, 0, 10));
  tally.answered(2, registry(2.5, 1, 20));
  const both = await tally.aggregate(new Set([1, 2]), { live: 2, unresponsive: 0 }).metrics();
  t.equal(sample(both, 'pets_latency_seconds_count{operation="listPets"}'), 30);
  t.equal(sample(both, 'pets_db_pool_connections'), 6);
  t.equal(sample(both, 'pets_ready'), 1, 'ready when a worker is: not the count of ready workers');
  t.equal(sample(both, 'pets_cluster_workers_ready'), 1);
  t.equal(sample(both, 'pets_cluster_workers'), 2);
  t.equal(sample(both, 'pets_cluster_workers_unresponsive'), 0);

  // Worker 2 stops answering: its counters stay, its gauges and readiness go.
  tally.answered(1, registry(1.75, 0, 11));
  const stale = await tally.aggregate(new Set([1]), { live: 2, unresponsive: 1 }).metrics();
  t.equal(sample(stale, 'pets_latency_seconds_count{operation="listPets"}'), 31);
  t.equal(sample(stale, 'pets_latency_seconds_sum{operation="listPets"}'), 4.25);
  t.equal(sample(stale, 'pets_db_pool_connections'), 3);
  t.equal(sample(stale, 'pets_ready'), 0, 'the only worker that answered is not ready');
  t.equal(sample(stale, 'pets_cluster_workers_ready'), 0);
  t.equal(sample(stale, 'pets_cluster_workers_unresponsive'), 1);
  t.equal(stale.match(/^# TYPE pets_ready /gm)?.length, 1, 'one pets_ready: the workers’ own are not summed');

  tally.answered(2, registry(2.5, 1, 20));
  tally.answered(3, registry(0, 1, 0));
  const two = await tally.aggregate(new Set([1, 2, 3]), { live: 3, unresponsive: 0 }).metrics();
  t.equal(sample(two, 'pets_ready'), 1, 'two ready workers: ready, as a lone server is');
  t.equal(sample(two, 'pets_cluster_workers_ready'), 2);
  tally.departed(3);

  const none = await tally.aggregate(new Set(), { live: 2, unresponsive: 2 }).metrics();
  t.equal(sample(none, 'pets_latency_seconds_count{operation="listPets"}'), 31, 'counters without any answer');
  t.equal(sample(none, 'pets_ready'), 0);
});
