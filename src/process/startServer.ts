import cluster from 'node:cluster';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import { metricsPortOf } from '../config/load.js';
import { keyChangesUrlOf, type DatabaseHooks } from '../config/databaseOptions.js';
import type { Config } from '../config/load.js';
import { trackAvailability, type Database } from '../db/index.js';
import type { LogStream } from '../observability/logging.js';
import { exposeMetrics } from '../observability/exposeMetrics.js';
import { createMetrics, noMetrics, type ServiceMetrics } from '../observability/metrics.js';
import { apiBasePath } from '../openapi/document.js';
import { openControlSocket } from './controlSocket.js';
import { serviceVersion } from './serviceVersion.js';
import { closeGracefully, type Attached } from './shutdown.js';
import { answerHealthChecks } from './workerHealth.js';
import {
  listenOrFail,
  loadConfigOrFail,
  openOrFail,
  prepareOrFail,
  startTracingOrFail,
  StartupError,
} from './startupErrors.js';

function announceFirstKey(key: string, address: string): string {
  return [
    '',
    'No API key existed, so one was created. It is shown this once; keep it:',
    '',
    `    ${key}`,
    '',
    `Use it as:  curl -H 'Authorization: Bearer ${key}' ${address}${apiBasePath()}/pets`,
    'More keys:  npm run apikey -- create <name>',
    '',
  ].join('\n');
}

export interface RunningServer {
  app: FastifyInstance;
  db: Database;
  config: Config;
  address: string;
  /** http://host:port of the metrics listener; undefined when METRICS_PORT=off or in a cluster worker. */
  metricsAddress: string | undefined;
  /** The Unix socket `npm run apikey` reaches this server through (embedded database only). */
  controlSocket: string | undefined;
  /** Drains, closes the database and resolves with the exit code the process should use. */
  shutdown(signal: string): Promise<number>;
}

export interface StartOptions {
  /** Called once the server listens, before the database is ready (/healthz answers, /readyz 503). */
  onListening?: (address: string) => void;
  /** Aborting it stops the start-up retries (a signal during start-up). */
  signal?: AbortSignal;
  /** Tests only: the embedded database's free-space floor (a disk that looks full). */
  minFreeMb?: number;
  /** Tests only: the service's log lines go here instead of stdout. */
  logStream?: LogStream;
}

/**
 * Reads the configuration, opens the database, listens (so /healthz answers
 * while the database is waited for), then prepares the database (retrying
 * PostgreSQL for DATABASE_STARTUP_TIMEOUT_MS) and starts serving the API.
 */
export async function startServer(
  env: NodeJS.ProcessEnv = process.env,
  out: NodeJS.WritableStream = process.stdout,
  options: StartOptions = {},
): Promise<RunningServer> {
  const config = loadConfigOrFail(env);
  // Before the database is opened, so that its queries are instrumented.
  const tracing = await startTracingOrFail(process.env);
  // The app's logger, once the app exists (the pool is lazy: no errors before).
  const logger: { current?: FastifyBaseLogger } = {};
  // The metrics, once they exist (after the database is opened; no transaction runs before).
  let metrics: ServiceMetrics = noMetrics;
  const hooks: DatabaseHooks = {
    onPoolError(error) {
      logger.current?.warn({ reason: error.message }, 'database pool error');
    },
    onReplicaChange(state, reads) {
      const level = state.state === 'streaming' ? 'info' : 'warn';
      logger.current?.[level](
        { replica: state.replica, reads },
        `replica ${state.replica}: ${state.state}; reads use the ${reads === 'replicas' ? 'replicas' : 'primary'}`,
      );
    },
    onRideThrough(report) {
      metrics.databaseRideThrough(report.outcome);
      const fields = { reason: report.reason, attempts: report.attempts, durationMs: report.durationMs };
      if (report.outcome === 'succeeded')
        logger.current?.info(fields, 'database work tried again through a short outage: succeeded');
      else logger.current?.warn(fields, 'database work tried again through a short outage: gave up (503)');
    },
    onKeyChanges(state, reason) {
      if (state === 'listening') logger.current?.info('listening for API key changes: a revocation acts at once');
      else
        logger.current?.warn(
          { reason },
          'lost the connection listening for API key changes; reconnecting, until then a revoked key works ' +
            'for up to API_KEY_CACHE_SECONDS',
        );
    },
  };
  const opened = await openOrFail(config, hooks, options.minFreeMb);
  const db = trackAvailability(opened, {
    started(reason) {
      logger.current?.warn({ reason }, 'database outage started: requests answer 503 until it ends');
    },
    ended(durationMs, failedCalls) {
      logger.current?.info({ durationMs, failedCalls }, 'database outage ended');
    },
  });
  let markDatabaseReady = () => {};
  const databaseReady = new Promise<void>((resolve) => {
    markDatabaseReady = resolve;
  });
  const attached: Attached = { metricsServer: undefined, tracing, controlSocket: undefined };
  const metricsPort = metricsPortOf(config);
  metrics = metricsPort === undefined ? noMetrics : createMetrics();
  // A lone server listens at once, so that /healthz answers while the database is waited for. A cluster
  // worker shares its port with workers that serve: it listens only once ready, so that no live request
  // meets its start-up (503 "starting"); its primary checks its health over IPC meanwhile.
  const listenFirst = !cluster.isWorker;
  const app = await buildApp(config, {
    db: tracing ? tracing.traceDatabase(db) : db,
    databaseReady,
    compileBeforeListening: !listenFirst,
    ...(options.logStream ? { logStream: options.logStream } : {}),
    metrics,
    ...(tracing ? { httpTracing: tracing.httpPlugin } : {}),
  });
  logger.current = app.log;
  const listen = async () => {
    const address = await listenOrFail(app, config);
    options.onListening?.(address);
    return address;
  };
  try {
    let address = listenFirst ? await listen() : undefined;
    const metricsServer =
      metrics.registry && metricsPort !== undefined
        ? await exposeMetrics(metrics.registry, config.METRICS_HOST, metricsPort, (error) => {
            app.log.error({ err: error }, 'metrics scrape failed');
          }).catch((error: unknown) => {
            throw new StartupError(
              `Cannot serve metrics on ${config.METRICS_HOST}:${metricsPort} (${(error as Error).message}); ` +
                'set METRICS_PORT to a free port or off',
            );
          })
        : undefined;
    attached.metricsServer = metricsServer;
    if (metricsServer) app.log.info(`metrics on ${metricsServer.address}/metrics`);
    if (tracing) app.log.info('tracing on: spans are exported as the OTEL_* variables say');
    answerHealthChecks();
    if (config.DATABASE_URL && address) app.log.info(`listening on ${address}; waiting for the database`);
    if (config.DATABASE_URL && keyChangesUrlOf(config) === undefined)
      app.log.warn(
        'API key changes are not heard through a transaction pooler (DATABASE_STATEMENTS=unnamed): set ' +
          'DATABASE_DIRECT_URL, or a revoked key works for up to API_KEY_CACHE_SECONDS',
      );
    const prepared = await prepareOrFail(opened, config, app.log, options.signal);
    if (prepared.activeKeys === 0 && !prepared.firstKey) {
      app.log.warn(
        'No active API key exists: every request will get 401. Create one with `npm run apikey -- create <name>` or set BOOTSTRAP_API_KEY.',
      );
    }
    markDatabaseReady();
    address ??= await listen();
    if (db.kind === 'embedded') attached.controlSocket = await openControlSocket(db, config.DATA_DIR, env, app.log);
    if (prepared.firstKey) out.write(announceFirstKey(prepared.firstKey, address));
    const where = db.kind === 'embedded' ? `embedded database in ${config.DATA_DIR}` : 'PostgreSQL database';
    const version = serviceVersion();
    app.log.info({ version }, `serving ${address}${apiBasePath()} on the ${where} (pet-store-service ${version})`);
    return {
      app,
      db,
      config,
      address,
      metricsAddress: metricsServer?.address,
      controlSocket: attached.controlSocket?.path,
      shutdown: (signal) => closeGracefully(app, db, config, attached, signal),
    };
  } catch (error) {
    await attached.controlSocket?.close();
    await attached.metricsServer?.close();
    await app.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
}

// After the shutdown deadline, cancelling and closing get this long before
// the process exits regardless: SHUTDOWN_TIMEOUT_MS bounds the exit.
