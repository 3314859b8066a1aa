import type { Static } from '@sinclair/typebox';
import type { configSchema } from './schema.js';
import type { DatabaseOptions, ReplicaState, RideThroughReport } from '../db/index.js';
import { configNames, validate as validateConfig } from '../generated/configValidator.js';
import { trustProxyProblem } from './trustProxy.js';

export type Config = Static<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads the configuration from an environment once. Empty strings count as
 * unset. A bad value throws a ConfigError naming the variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const candidate: Record<string, unknown> = {};
  for (const name of configNames) {
    const value = env[name];
    if (value !== undefined && value !== '') candidate[name] = value;
  }
  if (!validateConfig(candidate)) {
    const problems = (validateConfig.errors ?? []).map((error) => {
      const name = error.instancePath.slice(1) || String(error.params['missingProperty'] ?? '');
      // URLs may hold passwords, the bootstrap key is one.
      const shown = /_URL$|_KEY$/.test(name) ? '' : ` (got ${JSON.stringify(env[name])})`;
      const allowed = error.keyword === 'enum' ? (error.params['allowedValues'] as unknown[] | undefined) : undefined;
      const rule = allowed ? `must be one of ${allowed.join(', ')}` : error.message;
      return `${name} ${rule}${shown}`;
    });
    throw new ConfigError(`Invalid configuration: ${[...new Set(problems)].join('; ')}`);
  }
  // validateConfig checked it, filled in the defaults and coerced the types.
  const config = candidate as Config;
  const trustProblem = trustProxyProblem(config.TRUST_PROXY);
  if (trustProblem !== undefined) throw new ConfigError(`Invalid configuration: ${trustProblem}`);
  assertConsistent(config);
  return config;
}

/** The port of the metrics listener, or undefined when METRICS_PORT=off. */
export function metricsPortOf(config: Pick<Config, 'METRICS_PORT'>): number | undefined {
  return config.METRICS_PORT === 'off' ? undefined : Number(config.METRICS_PORT);
}

function assertConsistent(config: Config): void {
  if (config.METRICS_PORT !== 'off' && Number(config.METRICS_PORT) > 65535) {
    throw new ConfigError(
      `Invalid configuration: METRICS_PORT must be off or a port up to 65535 (got ${config.METRICS_PORT})`,
    );
  }
  for (const name of ['DATABASE_DIRECT_URL', 'DATABASE_READ_URL'] as const) {
    if (config[name] && !config.DATABASE_URL) {
      throw new ConfigError(
        `Invalid configuration: ${name} needs DATABASE_URL (the embedded database has no ${name}).`,
      );
    }
  }
  if (config.MIGRATE_ON_START && config.DATABASE_URL && config.DATABASE_STATEMENTS === 'unnamed') {
    if (!config.DATABASE_DIRECT_URL) throw migrationsNeedDirectUrl('MIGRATE_ON_START=true');
  }
}

function migrationsNeedDirectUrl(what: string): ConfigError {
  return new ConfigError(
    `Invalid configuration: ${what} with DATABASE_STATEMENTS=unnamed (a transaction pooler) needs ` +
      'DATABASE_DIRECT_URL: migrations hold a lock for their whole transaction and run longer than ' +
      'pooler and query timeouts allow, so they connect to the primary directly.',
  );
}

export interface DatabaseHooks {
  /** An idle pooled connection failed (the pool replaces it). */
  onPoolError?: (error: Error) => void;
  /** A replica changed state (reachable, lagging, ...). */
  onReplicaChange?: (state: ReplicaState, reads: 'replicas' | 'primary') => void;
  /** A transaction or a read was tried again through a short outage of the primary (a switchover). */
  onRideThrough?: (report: RideThroughReport) => void;
}

type DatabaseSettings = Pick<
  Config,
  | 'DATABASE_URL'
  | 'DATA_DIR'
  | 'DATABASE_POOL_SIZE'
  | 'DATABASE_STATEMENTS'
  | 'DATABASE_READ_URL'
  | 'REPLICA_MAX_LAG_SECONDS'
>;

/**
 * The longest a request's statement may take to answer, time queued in a
 * pooler included (the pooler accepts the login at once); past it the
 * request gets 503 and the connection is dropped. Every statement of a
 * request reads or writes a few rows by index (a page is at most 100
 * pets): milliseconds. 10 s is a database that has stopped answering,
 * not a slow query, and stays under a client's usual 30 s timeout.
 * Administrative work (migrations) has no such bound.
 */
const requestQueryTimeoutMs = 10_000;

const readUrlsOf = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');

/** Where the service's database is, in the storage layer's own terms. */
export function databaseOptionsOf(config: DatabaseSettings, hooks: DatabaseHooks = {}): DatabaseOptions {
  if (!config.DATABASE_URL) return { dataDir: config.DATA_DIR };
  const urls = readUrlsOf(config.DATABASE_READ_URL);
  return {
    url: config.DATABASE_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    statements: config.DATABASE_STATEMENTS,
    queryTimeoutMs: requestQueryTimeoutMs,
    ...(urls.length > 0
      ? {
          replicas: {
            urls,
            maxLagSeconds: config.REPLICA_MAX_LAG_SECONDS,
            ...(hooks.onReplicaChange ? { onChange: hooks.onReplicaChange } : {}),
          },
        }
      : {}),
    ...(hooks.onPoolError ? { onPoolError: hooks.onPoolError } : {}),
    ...(hooks.onRideThrough ? { onRideThrough: hooks.onRideThrough } : {}),
  };
}

/**
 * The primary for administrative work (migrations, the API key CLI), which
 * wants a session of its own: DATABASE_DIRECT_URL, else DATABASE_URL. No
 * query timeout (a migration may take long). Migrations refuse to go through
 * a transaction pooler (DATABASE_STATEMENTS=unnamed without a direct URL).
 */
export function directDatabaseOptionsOf(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DATABASE_DIRECT_URL' | 'DATABASE_STATEMENTS'>,
  purpose: 'migrations' | 'administration',
): DatabaseOptions {
  if (!config.DATABASE_URL) return { dataDir: config.DATA_DIR };
  if (config.DATABASE_DIRECT_URL) return { url: config.DATABASE_DIRECT_URL, poolSize: 1 };
  if (purpose === 'migrations' && config.DATABASE_STATEMENTS === 'unnamed') {
    throw migrationsNeedDirectUrl('Migrating');
  }
  return {
    url: config.DATABASE_URL,
    poolSize: 1,
    statements: config.DATABASE_STATEMENTS,
  };
}
