import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite, types, type Transaction } from '@electric-sql/pglite';
import { lockDataDir } from './dataDirLock.js';
import type { Database, Queryable, QueryResult, Statement } from './types.js';

// PGlite returns int8 as number or bigint depending on the value; read it as
// text, as pg does, so int8ToNumber is the one place it is converted.
const parsers = { [types.INT8]: (value: string) => value };

function queryableOf(client: PGlite | Transaction): Queryable {
  return {
    async query<Row>(statement: Statement, values: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const result = await client.query<Row>(statement.text, values as unknown[]);
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async execScript(sql: string): Promise<void> {
      await client.exec(sql);
    },
  };
}

/**
 * The embedded database: PostgreSQL compiled to WebAssembly, in this process,
 * with its files in dataDir. It does not fsync: a power loss can lose the
 * last writes (see the README).
 */
export async function openEmbedded(dataDir: string): Promise<Database> {
  const folder = resolve(dataDir);
  const lock = lockDataDir(folder);
  try {
    const pgdata = join(folder, 'pgdata');
    mkdirSync(pgdata, { recursive: true });
    const db = await PGlite.create(pgdata, { parsers });
    const root = queryableOf(db);
    return {
      kind: 'embedded',
      ...root,
      // A raw BEGIN through query() would leak into other callers' queries;
      // PGlite's transaction() holds them off until it ends.
      transaction: (work) => db.transaction((tx) => work(queryableOf(tx))),
      async close() {
        try {
          await db.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}
