import pg from 'pg';
import { listenOnPostgres, noKeyChanges } from './keyChanges.js';
import { createPool, queryableOf, statementSettingsOf } from './pool.js';
import { openReplicaSet } from './replicas.js';
import { rideThrough, rideThroughBudgetMs, type RideThroughSettings } from './rideThrough.js';
import { runTransaction } from './transaction.js';
import type { Database, PostgresOptions } from './types.js';
import { passesSoon } from './unavailability.js';

/**
 * Ends the sessions of every checked-out connection, from a separate
 * connection: the statement each runs is stopped and its open transaction
 * rolled back by the server, so a write whose client was cut never commits
 * later. The code awaiting them gets a 57P01 error and discards them.
 * Resolves with how many sessions were ended.
 */
async function cancelInFlight(url: string, checkedOut: Set<pg.PoolClient>): Promise<number> {
  const pids = [...checkedOut]
    .map((client) => (client as pg.PoolClient & { processID?: number | null }).processID)
    .filter((pid): pid is number => typeof pid === 'number');
  if (pids.length === 0) return 0;
  const canceller = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await canceller.connect();
    await canceller.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
    return pids.length;
  } catch {
    // The server is unreachable, so nothing can commit there either.
    return 0;
  } finally {
    await canceller.end().catch(() => undefined);
  }
}

/** The primary through a pool, and its read replicas when there are any. */
export function openPostgres(options: PostgresOptions): Database {
  const statements = statementSettingsOf(options);
  const named = statements.named;
  const pool = createPool(options.url, options);
  const checkedOut = new Set<pg.PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_error, client) => checkedOut.delete(client));
  pool.on('remove', (client) => checkedOut.delete(client));
  const root = queryableOf(pool, statements);
  // Off once shutdown cancels the work in flight: a cancelled write must not be run again.
  let riding = true;
  const rideThroughSettings: RideThroughSettings = {
    budgetMs: rideThroughBudgetMs,
    active: () => riding,
    onRideThrough: options.onRideThrough,
  };
  const keyChanges = options.keyChanges ? listenOnPostgres(options.keyChanges) : undefined;
  const replicas =
    options.replicas && options.replicas.urls.length > 0 ? openReplicaSet(root, options.replicas, options) : undefined;
  return {
    kind: 'postgres',
    ...root,
    transaction: (work) => runTransaction(pool, statements, rideThroughSettings, work),
    read: (read) => rideThrough(rideThroughSettings, read, passesSoon),
    replica: () => replicas?.pick(),
    readStatus: () => replicas?.status() ?? { reads: 'primary', replicas: [] },
    poolStatus: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: options.poolSize,
    }),
    // Behind a transaction pooler the process ids a connection reports are
    // the pooler's own, not the server's: terminating them could end another
    // client's session. The pooler rolls back a transaction whose client
    // goes away, which closing the connections does.
    cancelInFlight: () => {
      riding = false;
      return named ? cancelInFlight(options.url, checkedOut) : Promise.resolve(0);
    },
    keyChanges: keyChanges ?? noKeyChanges,
    async close() {
      riding = false;
      await keyChanges?.close();
      await replicas?.close();
      await pool.end();
    },
  };
}
