import pg from 'pg';
import { loopback } from './network.js';

/**
 * One statement on a fresh connection to a server on loopback (a probe, an
 * admin command), closed afterwards whatever happened. Without values pg uses
 * the simple query protocol, the only one PgBouncer's admin console speaks.
 */
export async function queryOn<Row>(port: number, database: string, sql: string, user = 'postgres'): Promise<Row[]> {
  const client = new pg.Client({
    connectionString: `postgres://${user}@${loopback}:${port}/${database}`,
    connectionTimeoutMillis: 2_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query(sql)).rows as Row[];
  } finally {
    await client.end().catch(() => undefined);
  }
}
