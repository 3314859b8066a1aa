import type { DatabaseOptions, ReplicaState, RideThroughReport } from '../db/index.js';
import { migrationsNeedDirectUrl, type Config } from './load.js';

// The configuration in the storage layer's own terms: src/db takes
// DatabaseOptions and never reads an environment variable name.

export interface DatabaseHooks {
  /** An idle pooled connection failed (the pool replaces it). */
  onPoolError?: (error: Error) => void;
  /** A replica changed state (reachable, lagging, ...). */
  onReplicaChange?: (state: ReplicaState, reads: 'replicas' | 'primary') => void;
  /** A transaction or a read was tried again through a short outage of the primary (a switchover). */
  onRideThrough?: (report: RideThroughReport) => void;
  /** The connection that listens for API key changes started listening, or was lost. */
  onKeyChanges?: (state: 'listening' | 'lost', reason?: string) => void;
}

type DatabaseSettings = Pick<
  Config,
  | 'DATABASE_URL'
  | 'DATA_DIR'
  | 'DATABASE_POOL_SIZE'
  | 'DATABASE_STATEMENTS'
  | 'DATABASE_READ_URL'
  | 'REPLICA_MAX_LAG_SECONDS'
  | 'DATABASE_DIRECT_URL'
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

/**
 * Where the service LISTENs for API key changes: the direct URL, else
 * DATABASE_URL unless it is a transaction pooler (DATABASE_STATEMENTS=
 * unnamed), which hands the session's server connection to other clients
 * after each transaction and so never delivers a notification; then none,
 * and a revoked key works on until its cache time ends.
 */
export function keyChangesUrlOf(
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_DIRECT_URL' | 'DATABASE_STATEMENTS'>,
): string | undefined {
  if (config.DATABASE_DIRECT_URL) return config.DATABASE_DIRECT_URL;
  return config.DATABASE_STATEMENTS === 'unnamed' ? undefined : config.DATABASE_URL;
}

/** Where the service's database is, in the storage layer's own terms. */
export function databaseOptionsOf(config: DatabaseSettings, hooks: DatabaseHooks = {}): DatabaseOptions {
  if (!config.DATABASE_URL) return { dataDir: config.DATA_DIR };
  const urls = readUrlsOf(config.DATABASE_READ_URL);
  const keyChangesUrl = keyChangesUrlOf(config);
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
    ...(keyChangesUrl
      ? { keyChanges: { url: keyChangesUrl, ...(hooks.onKeyChanges ? { onState: hooks.onKeyChanges } : {}) } }
      : {}),
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
