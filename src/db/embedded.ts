import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite, types, type Transaction } from '@electric-sql/pglite';
import { secureDataDir } from './dataDirAccess.js';
import { lockDataDir } from './dataDirLock.js';
import { int8ToNumber } from './int8.js';
import { keyChangeListeners, keyChangesChannel, parseKeyChange } from './keyChanges.js';
import { unstorableValue } from './dataException.js';
import { assertFreeSpace, createDiskGuard, DiskFullError, isDiskFull, type DiskGuard } from './diskSpace.js';
import type { Database, EmbeddedOptions, Queryable, QueryResult, Statement } from './types.js';
import { DatabaseUnavailableError } from './unavailability.js';

// PGlite returns int8 as number or bigint depending on the value; parsed
// from its text by int8ToNumber, as pg's are (pool.ts): a number, or refused.
const parsers = { [types.INT8]: int8ToNumber };

/**
 * Runs work unless the disk is (nearly) full; a full disk is a
 * DatabaseUnavailableError, a value PostgreSQL refused an UnstorableValueError.
 */
async function guarded<T>(disk: DiskGuard, work: () => Promise<T>): Promise<T> {
  disk.check();
  try {
    return await work();
  } catch (error) {
    throw isDiskFull(error) ? new DatabaseUnavailableError(error) : (unstorableValue(error) ?? error);
  }
}

function queryableOf(client: PGlite | Transaction, disk: DiskGuard): Queryable {
  return {
    async query<Row>(statement: Statement, values: readonly unknown[] = []): Promise<QueryResult<Row>> {
      const result = await guarded(disk, () => client.query<Row>(statement.text, values as unknown[]));
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async execScript(sql: string): Promise<void> {
      await guarded(disk, () => client.exec(sql));
    },
  };
}

/**
 * Below this much free space the embedded database refuses work (503): a
 * new WAL segment takes 16 MB, and PGlite hangs instead of failing when a
 * write meets a full disk; 24 MB leaves room for one segment and the
 * catalog writes around it. More would refuse work a disk can still take.
 */
const defaultMinFreeMb = 24;

/**
 * The embedded database: PostgreSQL compiled to WebAssembly, in this process,
 * with its files in dataDir. It does not fsync: a power loss can lose the
 * last writes (see the README).
 *
 * dataDir is owner-only (secureDataDir), checked before the lock is taken and
 * tightened again once PGlite has started and when it closes. A umask would
 * not do: PGlite gives the files of a new cluster mode 0666 and rewrites
 * pg_internal.init 0644 whatever the process umask (measured with 022 and
 * 077); only folders follow it. The files it makes while running (0600, as
 * PostgreSQL asks) sit in folders no one else may enter.
 */
export async function openEmbedded(options: EmbeddedOptions): Promise<Database> {
  const folder = resolve(options.dataDir);
  const minFreeMb = options.minFreeMb ?? defaultMinFreeMb;
  secureDataDir(folder);
  const lock = await lockDataDir(folder);
  try {
    const pgdata = join(folder, 'pgdata');
    mkdirSync(pgdata, { recursive: true, mode: 0o700 });
    assertFreeSpace(folder, minFreeMb);
    const db = await PGlite.create(pgdata, { parsers }).catch((error: unknown) => {
      // PGlite aborts (RuntimeError: Aborted()) when it cannot write its files.
      const why = error instanceof Error ? error.message.split('\n', 1)[0] : String(error);
      throw new DiskFullError(
        `The embedded database in ${folder} could not start (${why}); if its disk is full, free space and start again.`,
      );
    });
    secureDataDir(folder);
    const disk = createDiskGuard(folder, minFreeMb);
    const root = queryableOf(db, disk);
    // One session, in this process: every change committed is heard, by
    // the server and by the commands it runs for the CLI (controlSocket.ts).
    const keyChanges = keyChangeListeners();
    const unlisten = await db.listen(keyChangesChannel, (payload) => {
      keyChanges.emit(parseKeyChange(payload));
    });
    return {
      kind: 'embedded',
      ...root,
      // A raw BEGIN through query() would leak into other callers' queries;
      // PGlite's transaction() holds them off until it ends.
      transaction: (work) => guarded(disk, () => db.transaction((tx) => work(queryableOf(tx, disk)))),
      replica: () => undefined,
      readStatus: () => ({ reads: 'primary', replicas: [] }),
      poolStatus: () => undefined,
      // Statements run in this process and end with it.
      read: (read) => read(),
      cancelInFlight: () => Promise.resolve(0),
      keyChanges: { subscribe: keyChanges.add, live: () => true },
      async close() {
        try {
          await unlisten().catch(() => undefined);
          await db.close();
          // At rest owner-only too; a folder already removed has nothing to tighten.
          if (existsSync(folder)) secureDataDir(folder);
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
