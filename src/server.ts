import closeWithGrace from 'close-with-grace';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from './app.js';
import {
  ConfigError,
  databaseOptionsOf,
  loadConfig,
  metricsPortOf,
  type Config,
  type DatabaseHooks,
} from './config/load.js';
import {
  DatabaseUnavailableError,
  DataDirLockedError,
  DiskFullError,
  openDatabase,
  ReadOnlyDatabaseError,
  trackAvailability,
  unavailabilityOf,
  type Database,
} from './db/index.js';
import { SchemaOutdatedError } from './db/migrations.js';
import { isMainModule } from './entryPoint.js';
import type { LogStream } from './observability/logging.js';
import { exposeMetrics } from './observability/exposeMetrics.js';
import { createMetrics, noMetrics, type ServiceMetrics } from './observability/metrics.js';
import type { MetricsServer } from './observability/metricsServer.js';
import { startTracingIfRequested, type Tracing } from './observability/tracingSwitch.js';
import { apiBasePath } from './openapi/document.js';
import { prepareDatabase, type PreparedDatabase } from './process/prepareDatabase.js';
import { retryUntilReady, StartupTimeoutError } from './process/startupRetry.js';

/** A start-up failure an operator can act on: one line, no stack trace. */
export class StartupError extends Error {
  override name = 'StartupError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

function announceFirstKey(key: string, address: string): string {
  return [
    '',
    'No API key existed, so one was created. It is shown this once; keep it:',
    '',
    `    ${key}`,
    '',
    `Use it as:  curl -H 'Authorization: Bearer ${key}' ${address}${apiBasePath}/pets`,
    'More keys:  npm run apikey -- create <name>   (with the server stopped, on the embedded database)',
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
  /** Drains, closes the database and resolves with the exit code the process should use. */
  shutdown(signal: string): Promise<number>;
}

function loadConfigOrFail(env: NodeJS.ProcessEnv): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new StartupError(error.message, 2);
    throw error;
  }
}

async function startTracingOrFail(env: NodeJS.ProcessEnv): Promise<Tracing | undefined> {
  try {
    return await startTracingIfRequested(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new StartupError(error.message, 2);
    throw error;
  }
}

/** Opens the database: the embedded one at once (its failures are final), a PostgreSQL pool lazily. */
async function openOrFail(config: Config, hooks: DatabaseHooks, minFreeMb?: number): Promise<Database> {
  try {
    const options = databaseOptionsOf(config, hooks);
    return await openDatabase(minFreeMb === undefined ? options : { ...options, minFreeMb });
  } catch (error) {
    if (error instanceof DataDirLockedError || error instanceof DiskFullError) throw new StartupError(error.message);
    throw error;
  }
}

async function listenOrFail(app: FastifyInstance, config: Config): Promise<string> {
  try {
    return await app.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE') {
      throw new StartupError(
        `PORT ${config.PORT} is already in use on ${config.HOST}: stop the process using it or set PORT to a free port.`,
      );
    }
    if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new StartupError(`Cannot listen on ${config.HOST}:${config.PORT} (${code}): check HOST and PORT.`);
    }
    throw error;
  }
}

/** Migrates or checks the schema and stores the bootstrap key; PostgreSQL is retried while it may come up. */
async function prepareOrFail(
  db: Database,
  config: Config,
  log: FastifyBaseLogger,
  signal: AbortSignal | undefined,
): Promise<PreparedDatabase> {
  const attempt = () => prepareDatabase(db, config);
  try {
    if (!config.DATABASE_URL) return await attempt();
    return await retryUntilReady(attempt, {
      timeoutMs: config.DATABASE_STARTUP_TIMEOUT_MS,
      url: config.DATABASE_URL,
      ...(signal ? { signal } : {}),
      onRetry(attempt, reason, retryInMs) {
        log.warn({ attempt, retryInMs, reason }, 'database not ready; retrying');
      },
    });
  } catch (error) {
    if (signal?.aborted) throw new StartupError('Stopped while waiting for the database.', 0);
    const operatorCanAct =
      error instanceof SchemaOutdatedError ||
      error instanceof StartupTimeoutError ||
      error instanceof ReadOnlyDatabaseError ||
      error instanceof ConfigError;
    if (operatorCanAct) throw new StartupError(error.message);
    if (error instanceof DatabaseUnavailableError)
      throw new StartupError(`The database is unavailable: ${unavailabilityOf(error)}`);
    throw error;
  }
}

/** Balancers and orchestrators stop an instance with SIGTERM; SIGINT is someone at a terminal. */
const drainDelayOf = (config: Config, signal: string) => (signal === 'SIGTERM' ? config.DRAIN_DELAY_MS : 0);

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/**
 * The shutdown a load balancer can follow. First the drain (SIGTERM only,
 * DRAIN_DELAY_MS): /readyz answers 503 so that the balancer's checks take
 * the instance out, while requests are still served as usual (every answer
 * from then on closes its connection). Then it stops accepting, closes the
 * idle connections and lets in-flight requests finish for at most
 * SHUTDOWN_TIMEOUT_MS, exiting as soon as the last is answered; at that
 * deadline the database work still in flight is cancelled (so that a write
 * whose client is cut never commits later) and the remaining connections
 * are cut. Then the pool or the embedded database (its lock) is closed.
 * SIGINT, someone at a terminal, skips the drain.
 */
interface Attached {
  metricsServer: MetricsServer | undefined;
  tracing: Tracing | undefined;
}

async function closeGracefully(
  app: FastifyInstance,
  db: Database,
  config: Config,
  attached: Attached,
  signal: string,
): Promise<number> {
  const drainMs = drainDelayOf(config, signal);
  app.beginDrain();
  if (drainMs > 0) {
    app.log.info({ signal, drainMs }, 'draining: /readyz answers 503, requests are still served until the delay ends');
    await sleep(drainMs);
  }
  app.log.info({ signal, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutting down: draining in-flight requests');
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    void db.cancelInFlight().then((cancelled) => {
      app.log.warn(
        { cancelled },
        'shutdown timeout reached: cancelled the database work in flight, closing the remaining connections',
      );
    });
    app.server.closeAllConnections();
  }, config.SHUTDOWN_TIMEOUT_MS);
  let exitCode = 0;
  try {
    await app.close();
  } catch (error) {
    app.log.error({ err: error }, 'error while closing the HTTP server');
    exitCode = 1;
  } finally {
    clearTimeout(deadline);
    await db.close().catch((error: unknown) => {
      app.log.error({ err: error }, 'error while closing the database');
      exitCode = 1;
    });
  }
  await attached.metricsServer?.close();
  await attached.tracing?.flush().catch((error: unknown) => {
    app.log.warn({ err: error }, 'could not send the last spans');
  });
  app.log.info({ timedOut }, 'shut down');
  return exitCode;
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
  const attached: Attached = { metricsServer: undefined, tracing };
  const metricsPort = metricsPortOf(config);
  metrics = metricsPort === undefined ? noMetrics : createMetrics();
  const app = await buildApp(config, {
    db: tracing ? tracing.traceDatabase(db) : db,
    databaseReady,
    ...(options.logStream ? { logStream: options.logStream } : {}),
    metrics,
    ...(tracing ? { httpTracing: tracing.httpPlugin } : {}),
  });
  logger.current = app.log;
  try {
    const address = await listenOrFail(app, config);
    options.onListening?.(address);
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
    if (config.DATABASE_URL) app.log.info(`listening on ${address}; waiting for the database`);
    const prepared = await prepareOrFail(opened, config, app.log, options.signal);
    if (prepared.activeKeys === 0 && !prepared.firstKey) {
      app.log.warn(
        'No active API key exists: every request will get 401. Create one with `npm run apikey -- create <name>` or set BOOTSTRAP_API_KEY.',
      );
    }
    markDatabaseReady();
    if (prepared.firstKey) out.write(announceFirstKey(prepared.firstKey, address));
    const where = db.kind === 'embedded' ? `embedded database in ${config.DATA_DIR}` : 'PostgreSQL database';
    app.log.info(`serving ${address}${apiBasePath} on the ${where}`);
    return {
      app,
      db,
      config,
      address,
      metricsAddress: metricsServer?.address,
      shutdown: (signal) => closeGracefully(app, db, config, attached, signal),
    };
  } catch (error) {
    await attached.metricsServer?.close();
    await app.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
}

// After the shutdown deadline, cancelling and closing get this long before
// the process exits regardless: SHUTDOWN_TIMEOUT_MS bounds the exit.
const exitGraceMs = 2000;

/** What the process logs with: the app's logger once it exists, JSON lines on stdout before. */
function processLogger(config: Config, server: () => RunningServer | undefined): () => FastifyBaseLogger {
  let early: FastifyBaseLogger | undefined;
  return () => server()?.app.log ?? (early ??= pino({ level: config.LOG_LEVEL }));
}

/**
 * The process, run by close-with-grace as fastify/demo does: it starts the
 * server, and on SIGTERM, SIGINT (or another terminating signal) runs our
 * shutdown (the drain, then closeGracefully) and exits. A second signal
 * exits at once; so does the deadline (DRAIN_DELAY_MS + SHUTDOWN_TIMEOUT_MS
 * and a little). An uncaught exception or unhandled rejection is logged as
 * one JSON line (its stack inside), then the server shuts down without the
 * drain and the process exits 1. A signal during start-up stops it.
 */
async function main(): Promise<void> {
  const config = loadConfigOrFail(process.env);
  const starting = new AbortController();
  const serving: { server?: RunningServer } = {};
  const log = processLogger(config, () => serving.server);
  const started = startServer(process.env, process.stdout, { signal: starting.signal });
  closeWithGrace(
    {
      delay: config.DRAIN_DELAY_MS + config.SHUTDOWN_TIMEOUT_MS + exitGraceMs,
      logger: {
        error: (error: unknown) => {
          log().error({ err: error }, 'shutdown failed: exiting');
        },
      },
      onSecondSignal: (signal) => {
        log().warn({ signal }, 'second signal: exiting without waiting');
      },
      onSecondError: (error) => {
        log().fatal({ err: error }, 'uncaught error while shutting down: exiting without waiting');
      },
      onTimeout: (delayMs) => {
        log().error({ delayMs }, 'shutdown did not finish within DRAIN_DELAY_MS + SHUTDOWN_TIMEOUT_MS: exiting');
      },
    },
    async ({ signal, err }) => {
      if (err) log().fatal({ err }, 'uncaught error: shutting down');
      starting.abort();
      const running = await started.catch(() => undefined);
      // A start that failed or was stopped: the catch below reports it and exits.
      if (!running) return new Promise<never>(() => undefined);
      const code = await running.shutdown(signal ?? (err ? 'error' : 'exit'));
      if (code !== 0) process.exit(code);
    },
  );
  serving.server = await started;
}

if (isMainModule(import.meta.url)) {
  main().catch((error: unknown) => {
    const message =
      error instanceof StartupError
        ? error.message
        : `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
    process.stderr.write(`${message}\n`);
    process.exit(error instanceof StartupError ? error.exitCode : 1);
  });
}
