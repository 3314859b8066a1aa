import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { MetricsSource } from './metricsServer.js';

/**
 * The cluster primary's scrape: the sum over its workers, as prom-client's
 * AggregatorRegistry sums, with one difference: a worker that exits leaves
 * its counters and histograms behind. Summed counters would otherwise drop
 * by the departed worker's share when it dies and is forked again, rate()
 * would take the drop for a reset of the whole sum, and count everything the
 * other workers had served as new: one kill -9 reads as a burst of traffic
 * (or of errors) that never happened, and can page.
 *
 * Why keep the last values rather than a series per worker slot (a `worker`
 * label): the sum stays one series per label set, as with a lone server, so
 * rules, dashboards and cardinality are the same in both modes; and a slot's
 * series would still reset on each restart, which Prometheus reads right but
 * a plain sum over workers in a dashboard would not. The cost: what a worker
 * counted after the last scrape before its death is lost (never double
 * counted), and gauges (pets_ready, pool sizes) are not kept: they describe
 * live processes only.
 *
 * The workers answer with prom-client's own protocol (exposeMetrics.ts); the
 * primary's side is here because AggregatorRegistry does not say which
 * worker an answer came from.
 */

const request = 'prom-client:getMetricsReq';
const response = 'prom-client:getMetricsRes';

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}
interface MetricJson {
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
interface Scrape {
  waiting: Set<number>;
  finish: (error?: Error) => void;
}

/** Counters and histograms only grow in a live process: those a departed worker leaves behind. */
const kept = (metric: MetricJson) =>
  (metric.type === 'counter' || metric.type === 'histogram') && (metric.aggregator ?? 'sum') === 'sum';

const keyOf = (value: MetricValue) =>
  `${value.metricName ?? ''}\u0000${JSON.stringify(Object.entries(value.labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;

/** The sums of what departed workers counted, by metric name and label set. */
class Departed {
  private readonly metrics = new Map<string, { metric: MetricJson; values: Map<string, MetricValue> }>();

  add(metrics: MetricJson[]): void {
    for (const metric of metrics.filter(kept)) {
      let entry = this.metrics.get(metric.name);
      if (entry === undefined) {
        entry = { metric: { ...metric, values: [] }, values: new Map() };
        this.metrics.set(metric.name, entry);
      }
      for (const value of metric.values) {
        const key = keyOf(value);
        const sum = entry.values.get(key);
        entry.values.set(key, sum === undefined ? { ...value } : { ...sum, value: sum.value + value.value });
      }
    }
  }

  snapshot(): MetricJson[] {
    return [...this.metrics.values()].map(({ metric, values }) => ({ ...metric, values: [...values.values()] }));
  }
}

export interface ClusterMetrics extends MetricsSource {
  /** Workers whose last counts are kept in the sum. */
  readonly departedWorkers: number;
}

/** Call once in the primary, before forking: it follows every worker's answers and exits. */
export function clusterMetrics(timeoutMs = 5000): ClusterMetrics {
  const lastSeen = new Map<number, MetricJson[]>();
  const departed = new Departed();
  const scrapes = new Map<number, Scrape>();
  let departedWorkers = 0;
  let nextId = 0;

  const settle = (id: number, scrape: Scrape, worker: number) => {
    scrape.waiting.delete(worker);
    if (scrape.waiting.size === 0) {
      scrapes.delete(id);
      scrape.finish();
    }
  };

  cluster.on('message', (worker: Worker, message: Answer) => {
    if (message.type !== response || typeof message.requestId !== 'number') return;
    const scrape = scrapes.get(message.requestId);
    if (message.error !== undefined) {
      scrapes.delete(message.requestId);
      scrape?.finish(new Error(`worker ${worker.id}: ${message.error}`));
      return;
    }
    lastSeen.set(worker.id, (message.metrics ?? []).flat());
    if (scrape) settle(message.requestId, scrape, worker.id);
  });

  cluster.on('exit', (worker: Worker) => {
    const last = lastSeen.get(worker.id);
    lastSeen.delete(worker.id);
    if (last !== undefined) {
      departed.add(last);
      departedWorkers += 1;
    }
    for (const [id, scrape] of scrapes) if (scrape.waiting.has(worker.id)) settle(id, scrape, worker.id);
  });

  const ask = () =>
    new Promise<void>((resolve, reject) => {
      const id = nextId++;
      const workers = Object.values(cluster.workers ?? {}).filter(
        (worker): worker is Worker => worker?.isConnected() === true,
      );
      if (workers.length === 0) {
        resolve();
        return;
      }
      const timer = setTimeout(() => {
        scrapes.delete(id);
        reject(new Error(`workers did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      scrapes.set(id, {
        waiting: new Set(workers.map((worker) => worker.id)),
        finish: (error) => {
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        },
      });
      for (const worker of workers) worker.send({ type: request, requestId: id });
    });

  return {
    contentType: AggregatorRegistry.PROMETHEUS_CONTENT_TYPE,
    get departedWorkers() {
      return departedWorkers;
    },
    async render() {
      await ask();
      // Each worker counted once: live ones by their latest answer, departed ones in `departed`.
      return AggregatorRegistry.aggregate([departed.snapshot(), ...lastSeen.values()] as never).metrics();
    },
  };
}
