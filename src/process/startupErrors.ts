import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { assertBootstrapKeyUsable, BootstrapKeyError } from '../auth/provisioning.js';
import { databaseOptionsOf, type DatabaseHooks } from '../config/databaseOptions.js';
import { ConfigError, loadConfig, type Config } from '../config/load.js';
import {
  DatabaseUnavailableError,
  DataDirAccessError,
  DataDirLockedError,
  DiskFullError,
  openDatabase,
  ReadOnlyDatabaseError,
  unavailabilityOf,
  type Database,
} from '../db/index.js';
import { SchemaOutdatedError } from '../db/migrations.js';
import { startTracingIfRequested } from '../observability/tracingSwitch.js';
import type { Tracing } from '../observability/tracingTypes.js';
import { prepareDatabase, type PreparedDatabase } from './prepareDatabase.js';
import { retryUntilReady, StartupTimeoutError } from './startupRetry.js';

// Each step of the start that can fail in a way an operator can act on, with
// that failure turned into a StartupError: one line, and the exit code.

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

export function loadConfigOrFail(env: NodeJS.ProcessEnv): Config {
  try {
    const config = loadConfig(env);
    if (config.BOOTSTRAP_API_KEY) assertBootstrapKeyUsable(config.BOOTSTRAP_API_KEY);
    return config;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof BootstrapKeyError) throw new StartupError(error.message, 2);
    throw error;
  }
}

export async function startTracingOrFail(env: NodeJS.ProcessEnv): Promise<Tracing | undefined> {
  try {
    return await startTracingIfRequested(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new StartupError(error.message, 2);
    throw error;
  }
}

/** Opens the database: the embedded one at once (its failures are final), a PostgreSQL pool lazily. */
export async function openOrFail(config: Config, hooks: DatabaseHooks, minFreeMb?: number): Promise<Database> {
  try {
    const options = databaseOptionsOf(config, hooks);
    return await openDatabase(minFreeMb === undefined ? options : { ...options, minFreeMb });
  } catch (error) {
    if ([DataDirAccessError, DataDirLockedError, DiskFullError].some((type) => error instanceof type))
      throw new StartupError((error as Error).message);
    throw error;
  }
}

export async function listenOrFail(app: FastifyInstance, config: Config): Promise<string> {
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
export async function prepareOrFail(
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
