import pg from 'pg';
import type { PostgresOptions, Queryable, QueryResult, Statement } from './types.js';
import { translate, unavailabilityReason } from './unavailable.js';

export type PoolSettings = Pick<
  PostgresOptions,
  'poolSize' | 'statements' | 'acquireTimeoutMs' | 'queryTimeoutMs' | 'idleTimeoutMs' | 'onPoolError'
>;

const defaultAcquireTimeoutMs = 5000;

/** A pg pool whose waits are bounded: for a connection, and (when set) for each answer. */
export function createPool(url: string, settings: PoolSettings): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: settings.poolSize,
    // pg-pool applies it to both the wait in its own queue and connecting.
    connectionTimeoutMillis: settings.acquireTimeoutMs ?? defaultAcquireTimeoutMs,
    // Idle connections go back to the server soon, so that instances sharing
    // max_connections do not keep slots they are not using.
    idleTimeoutMillis: settings.idleTimeoutMs ?? 10000,
    // A pooler accepts the login at once and then queues the statement until
    // it has a server connection: only a bound on the answer ends that wait.
    ...(settings.queryTimeoutMs ? { query_timeout: settings.queryTimeoutMs } : {}),
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', (error) => settings.onPoolError?.(error));
  return pool;
}

/** Runs statements on a pool or a checked-out client; named says whether statements keep their names. */
export function queryableOf(client: pg.Pool | pg.PoolClient, named: boolean): Queryable {
  return {
    async query<Row>(statement: Statement, values: readonly unknown[] = []): Promise<QueryResult<Row>> {
      try {
        const result = await client.query({
          ...(named && statement.name ? { name: statement.name } : {}),
          text: statement.text,
          values: values as unknown[],
        });
        return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
      } catch (error) {
        return translate(error);
      }
    },
    async execScript(sql: string): Promise<void> {
      try {
        await client.query(sql);
      } catch (error) {
        translate(error);
      }
    },
  };
}

/** BEGIN, work, COMMIT on one connection; ROLLBACK on failure. */
export async function runTransaction<T>(
  pool: pg.Pool,
  named: boolean,
  work: (tx: Queryable) => Promise<T>,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    return translate(error);
  }
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(queryableOf(client, named));
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that failed or timed out is in no known state: closing it
    // rolls the transaction back on the server.
    broken = unavailabilityReason(error) !== undefined;
    if (!broken) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
    }
    return translate(error);
  } finally {
    // A connection that failed mid-transaction is not given back to the pool.
    client.release(broken);
  }
}

/** host:port/database of a connection string, for logs and /readyz (never its credentials). */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'an unparsable URL';
  }
}
