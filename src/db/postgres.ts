import pg from 'pg';
import { DatabaseUnavailableError, type Database, type Queryable, type QueryResult, type Statement } from './types.js';

// Errors that say the server is unreachable or shutting down, as opposed to a bad query.
const unavailableCodes = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08006',
]);

function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: string }).code;
  if (code && unavailableCodes.has(code)) return true;
  return /timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error/i.test(error.message);
}

function translate(error: unknown): never {
  throw isUnavailable(error) ? new DatabaseUnavailableError(error) : error;
}

function queryableOf(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<Row>(statement: Statement, values: readonly unknown[] = []): Promise<QueryResult<Row>> {
      try {
        const result = await client.query({ name: statement.name, text: statement.text, values: values as unknown[] });
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

export interface PostgresOptions {
  connectionString: string;
  poolSize: number;
  onError?: (error: Error) => void;
}

export function openPostgres(options: PostgresOptions): Database {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', (error) => options.onError?.(error));
  const root = queryableOf(pool);
  return {
    kind: 'postgres',
    ...root,
    async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        return translate(error);
      }
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work(queryableOf(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        broken = error instanceof DatabaseUnavailableError || isUnavailable(error);
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        if (error instanceof DatabaseUnavailableError) throw error;
        return translate(error);
      } finally {
        // A connection that failed mid-transaction is not given back to the pool.
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}
