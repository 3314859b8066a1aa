import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { clusterMetrics, type WorkerState } from './clusterMetrics.js';
import { startMetricsServer, type MetricsServer } from './metricsServer.js';

/**
 * Makes a process's metrics scrapable: a cluster worker answers its
 * primary's requests (the primary serves the sum over workers, see
 * cluster.ts); any other process listens on host:port itself.
 */
export async function exposeMetrics(
  registry: Registry,
  host: string,
  port: number,
  onError: (error: unknown) => void,
): Promise<MetricsServer | undefined> {
  if (cluster.isWorker) {
    AggregatorRegistry.setRegistries([registry]);
    // Constructing one installs the worker's listener for the primary's requests.
    new AggregatorRegistry();
    return undefined;
  }
  return startMetricsServer(
    host,
    port,
    { contentType: registry.contentType, render: () => registry.metrics() },
    onError,
  );
}

/**
 * In the cluster primary: one scrape answers the metrics of every worker,
 * summed, departed workers' counters included, within a bounded time
 * (clusterMetrics.ts).
 */
export function serveClusterMetrics(
  host: string,
  port: number,
  stateOf: (worker: number) => WorkerState,
  onError: (error: unknown) => void,
) {
  return startMetricsServer(host, port, clusterMetrics(stateOf), onError);
}
