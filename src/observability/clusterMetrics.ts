import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Gauge, Registry, type PrometheusContentType } from 'prom-client';
import { ExactSum } from './exactSum.js';
import { readyHelp } from './metrics.js';
import type { MetricsSource } from './metricsServer.js';

/**
 * The cluster primary's scrape: the workers' metrics summed, as prom-client's
 * AggregatorRegistry sums, with these differences.
 *
 * - A worker that exits leaves its counters and histograms behind, at the
 *   values it last answered. Summed counters would otherwise drop by the
 *   departed worker's share when it dies and is forked again, rate() would
 *   take the drop for a reset of the whole sum, and count everything the
 *   other workers had served as new: one kill -9 reads as a burst of traffic
 *   (or of errors) that never happened, and can page. What it counted after
 *   its last answer is lost (never double counted).
 * - A scrape waits a bounded time (scrapeAnswerMs) and only for the workers
 *   that answer the primary's health checks: a stopped or hung worker is
 *   shown by the counters it last answered, and counted in
 *   pets_cluster_workers_unresponsive, instead of failing the whole scrape
 *   (and blacking out the host's series).
 * - Counters are summed exactly (ExactSum), so that no order of workers
 *   makes a float sum go down.
 * - Gauges describe live processes: only the workers that answered this
 *   scrape count. pets_ready is the primary's own: 1 when a worker that
 *   answered is ready, which is what /readyz on the shared port says to a
 *   load balancer, the same meaning as a lone server's; how many workers are
 *   ready is pets_cluster_workers_ready.
 *
 * Why the last values rather than a series per worker slot (a `worker`
 * label): the sum stays one series per label set, as with a lone server, so
 * rules, dashboards and cardinality are the same in both modes; and a slot's
 * series would still reset on each restart, which Prometheus reads right but
 * a plain sum over workers in a dashboard would not.
 *
 * The workers answer with prom-client's own protocol (exposeMetrics.ts); the
 * primary's side is here because AggregatorRegistry does not say which
 * worker an answer came from, and waits for all of them.
 */

/**
 * How long a scrape waits for the workers' answers. A live worker answers
 * within milliseconds, one under load within a few hundred; Prometheus's
 * default scrape_timeout is 10 s: the scrape answers well within it,
 * whatever a worker does.
 */
export const scrapeAnswerMs = 2000;

const request = 'prom-client:getMetricsReq';
const response = 'prom-client:getMetricsRes';
const readyGauge = 'pets_ready';

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}
export interface MetricJson {
  name: string;
  help: string;
  type: string;
  aggregator?: string;
  values: MetricValue[];
}
interface Answer {
  type?: unknown;
  requestId?: unknown;
  metrics?: MetricJson[][];
  error?: string;
}

/** Counters and histograms only grow in a live process: those a departed worker leaves behind. */
const kept = (metric: MetricJson) =>
  (metric.type === 'counter' || metric.type === 'histogram') && (metric.aggregator ?? 'sum') === 'sum';

const keyOf = (value: MetricValue) =>
  `${value.metricName ?? ''}\u0000${JSON.stringify(Object.entries(value.labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;

/** Exact sums of counters and histograms, by metric name and series. */
class CounterSums {
  readonly #metrics = new Map<string, { metric: MetricJson; series: Map<string, [MetricValue, ExactSum]> }>();

  constructor(from?: CounterSums) {
    for (const [name, { metric, series }] of from ? from.#metrics : [])
      this.#metrics.set(name, {
        metric,
        series: new Map([...series].map(([key, [value, sum]]) => [key, [value, new ExactSum(sum)]])),
      });
  }

  add(metrics: MetricJson[]): void {
    for (const metric of metrics.filter(kept)) {
      let entry = this.#metrics.get(metric.name);
      if (entry === undefined) {
        entry = { metric: { ...metric, values: [] }, series: new Map() };
        this.#metrics.set(metric.name, entry);
      }
      for (const value of metric.values) {
        const key = keyOf(value);
        const sum = entry.series.get(key);
        if (sum === undefined) entry.series.set(key, [value, new ExactSum().add(value.value)]);
        else sum[1].add(value.value);
      }
    }
  }

  metrics(): MetricJson[] {
    return [...this.#metrics.values()].map(({ metric, series }) => ({
      ...metric,
      values: [...series.values()].map(([value, sum]) => ({ ...value, value: sum.value })),
    }));
  }
}

/** What the primary knows of its workers' answers; no I/O, so that it can be tested alone. */
export class ClusterTally {
  readonly #latest = new Map<number, MetricJson[]>();
  readonly #departed = new CounterSums();
  #departedWorkers = 0;

  /** Workers whose last counts are kept in the sum. */
  get departedWorkers(): number {
    return this.#departedWorkers;
  }

  /** A worker's answer: its whole registry, which replaces what it answered before. */
  answered(worker: number, metrics: MetricJson[]): void {
    this.#latest.set(worker, metrics);
  }

  /** A worker exited: its last counters stay in the sum for good. */
  departed(worker: number): void {
    const last = this.#latest.get(worker);
    this.#latest.delete(worker);
    if (last === undefined) return;
    this.#departed.add(last);
    this.#departedWorkers += 1;
  }

  /**
   * The registry a scrape shows: counters of every worker (departed ones,
   * live ones by their latest answer, fresh or not), gauges of the workers in
   * `fresh` only, and the primary's own gauges about its workers.
   */
  aggregate(fresh: ReadonlySet<number>, workers: { live: number; unresponsive: number }): Registry {
    const counters = new CounterSums(this.#departed);
    for (const metrics of this.#latest.values()) counters.add(metrics);
    const gauges = [...this.#latest]
      .filter(([worker]) => fresh.has(worker))
      .map(([, metrics]) => metrics.filter((metric) => !kept(metric) && metric.name !== readyGauge));
    const ready = [...this.#latest]
      .filter(([worker]) => fresh.has(worker))
      .filter(([, metrics]) =>
        metrics.some((m) => m.name === readyGauge && m.values.some((v) => v.value === 1)),
      ).length;
    const summed = AggregatorRegistry.aggregate<PrometheusContentType>([counters.metrics(), ...gauges]);
    return Registry.merge([summed, primaryGauges({ ...workers, ready })]);
  }
}

function primaryGauges(workers: { live: number; unresponsive: number; ready: number }): Registry {
  const registry = new Registry();
  const gauge = (name: string, help: string, value: number) => {
    new Gauge({ name, help, registers: [registry] }).set(value);
  };
  gauge(readyGauge, readyHelp, workers.ready > 0 ? 1 : 0);
  gauge('pets_cluster_workers', 'Worker processes of the cluster primary, starting ones included.', workers.live);
  gauge(
    'pets_cluster_workers_ready',
    'Workers whose /readyz answers 200, among those that answered the scrape.',
    workers.ready,
  );
  gauge(
    'pets_cluster_workers_unresponsive',
    'Workers that did not answer the primary in time: their counters are the last values they answered.',
    workers.unresponsive,
  );
  return registry;
}

/** Whether a scrape waits for a worker: not while it starts or once it stopped answering health checks. */
export type WorkerState = 'starting' | 'responsive' | 'unresponsive';

export interface ClusterMetrics extends MetricsSource {
  readonly departedWorkers: number;
}

interface Scrape {
  waiting: Set<number>;
  answered: Set<number>;
  finish: () => void;
}

/** Call once in the primary, before forking: it follows every worker's answers and exits. */
export function clusterMetrics(stateOf: (worker: number) => WorkerState, answerMs = scrapeAnswerMs): ClusterMetrics {
  const tally = new ClusterTally();
  const scrapes = new Map<number, Scrape>();
  let nextId = 0;

  cluster.on('message', (worker: Worker, message: Answer) => {
    if (message.type !== response || typeof message.requestId !== 'number') return;
    // A late answer is still the worker's newest: counters only grow.
    if (message.error === undefined) tally.answered(worker.id, (message.metrics ?? []).flat());
    const scrape = scrapes.get(message.requestId);
    if (!scrape) return;
    if (message.error === undefined) scrape.answered.add(worker.id);
    scrape.waiting.delete(worker.id);
    if (scrape.waiting.size === 0) scrape.finish();
  });

  cluster.on('exit', (worker: Worker) => {
    tally.departed(worker.id);
    for (const scrape of scrapes.values()) {
      scrape.waiting.delete(worker.id);
      if (scrape.waiting.size === 0) scrape.finish();
    }
  });

  /** Asks every worker; resolves with those that answered, once the responsive ones have or answerMs passed. */
  const ask = () =>
    new Promise<{ workers: Worker[]; answered: Set<number> }>((resolve) => {
      const id = nextId++;
      const workers = Object.values(cluster.workers ?? {}).filter(
        (worker): worker is Worker => worker?.isConnected() === true,
      );
      const scrape: Scrape = {
        waiting: new Set(workers.filter((worker) => stateOf(worker.id) === 'responsive').map((worker) => worker.id)),
        answered: new Set(),
        finish: () => {
          clearTimeout(timer);
          scrapes.delete(id);
          resolve({ workers, answered: scrape.answered });
        },
      };
      const timer = setTimeout(scrape.finish, answerMs);
      scrapes.set(id, scrape);
      for (const worker of workers)
        worker.send({ type: request, requestId: id }, () => {
          // A worker exiting meanwhile: its exit settles the scrape.
        });
      if (scrape.waiting.size === 0) setImmediate(scrape.finish);
    });

  return {
    contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE,
    get departedWorkers() {
      return tally.departedWorkers;
    },
    async render() {
      const { workers, answered } = await ask();
      const unresponsive = workers.filter(
        (worker) => !answered.has(worker.id) && stateOf(worker.id) !== 'starting',
      ).length;
      return tally.aggregate(answered, { live: workers.length, unresponsive }).metrics();
    },
  };
}
