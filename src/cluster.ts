import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, metricsPortOf } from './config/load.js';
import { serveClusterMetrics } from './observability/exposeMetrics.js';
import { watchWorkers } from './process/workerHealth.js';

// Node 20 ignores listen({ reusePort }) (it arrived in 22.12), so node:cluster
// is the way to share one port between processes on every supported version.
// Each worker is the ordinary server entry, with its own pool and key cache;
// it listens only once ready (database reachable, schema checked, schemas
// compiled), so no connection reaches a worker that would answer "starting".
//
// The workers share the primary's listening socket (SCHED_NONE), and each
// accept()s from its one queue when its event loop turns: a worker that is
// stopped or hung takes no new connection. Node's default on Linux
// (SCHED_RR: the primary accepts and hands each connection to the next worker)
// hands one to a stopped worker, which holds it, and the primary keeps its own
// copy of the socket until the worker acknowledges, so that client waits even
// after the worker is killed; SO_REUSEPORT (Node 22.12+) would give a stopped
// worker its hash share of the connections. The cost of SCHED_NONE: Linux wakes
// whichever idle worker first, so an idle cluster's connections are not spread
// evenly; a busy worker is not in accept(), so under load they are.
//
// The primary's scrape and what it keeps of departed or silent workers:
// src/observability/clusterMetrics.ts; its health checks: src/process/workerHealth.ts.
cluster.schedulingPolicy = cluster.SCHED_NONE;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

const requested = process.env['WEB_CONCURRENCY'];
const workers = requested === undefined || requested === '' ? availableParallelism() : Number(requested);
if (!Number.isInteger(workers) || workers < 1 || workers > 64)
  fail(`WEB_CONCURRENCY must be an integer from 1 to 64 (got ${JSON.stringify(requested)})`);
// The embedded database is locked by one process; only PostgreSQL can be shared.
if (!process.env['DATABASE_URL'])
  fail('npm start -- --cluster needs DATABASE_URL: the embedded database serves one process only');

// The primary serves /metrics (the sum over workers); the workers answer it, and do not listen for scrapes.
let metricsPort: number | undefined;
let metricsHost = '127.0.0.1';
try {
  const config = loadConfig(process.env);
  metricsPort = metricsPortOf(config);
  metricsHost = config.METRICS_HOST;
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error));
}

// The worker entry is this file's sibling in the same form: dist/server.js when built, src/server.ts under tsx.
const self = fileURLToPath(import.meta.url);
cluster.setupPrimary({ exec: join(dirname(self), `server${extname(self)}`) });

const health = watchWorkers((message) => process.stderr.write(`${message}\n`));
let stopping = false;
const startedAt = new Map<number, number>();
function fork(): void {
  const worker = cluster.fork();
  startedAt.set(worker.id, Date.now());
}

cluster.on('exit', (worker, code, signal) => {
  const lived = Date.now() - (startedAt.get(worker.id) ?? 0);
  startedAt.delete(worker.id);
  if (stopping) {
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    return;
  }
  // A worker that dies at once (bad config, unmigrated schema) would die again: stop instead of looping.
  if (lived < 5000) {
    process.stderr.write(
      `worker ${worker.process.pid} exited within ${lived} ms (code ${code}, signal ${signal}); stopping\n`,
    );
    stopping = true;
    for (const other of Object.values(cluster.workers ?? {})) other?.kill('SIGTERM');
    process.exitCode = 1;
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(1);
    return;
  }
  process.stderr.write(`worker ${worker.process.pid} exited (code ${code}, signal ${signal}); starting another\n`);
  fork();
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    stopping = true;
    health.stop();
    // Each worker drains (SIGTERM only) and closes its server and pool, as a lone server does.
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  });
}

for (let i = 0; i < workers; i++) fork();

if (metricsPort !== undefined) {
  const metricsServer = await serveClusterMetrics(
    metricsHost,
    metricsPort,
    (worker) => health.stateOf(worker),
    (error) => {
      process.stderr.write(`metrics scrape failed: ${error instanceof Error ? error.message : String(error)}\n`);
    },
  ).catch((error: unknown) => {
    stopping = true;
    health.stop();
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    return fail(
      `Cannot serve metrics on ${metricsHost}:${metricsPort} (${(error as Error).message}); set METRICS_PORT to a free port or off`,
    );
  });
  process.stdout.write(`cluster metrics on ${metricsServer.address}/metrics\n`);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void metricsServer.close());
}
