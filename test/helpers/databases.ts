import pg from 'pg';
import tap, { type Test } from 'tap';
import { openDatabase, type Database } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrations.js';
import { readyForReuse, schemaFingerprint } from './databaseReuse.js';
import { copyEmbeddedTemplate } from './embeddedTemplate.js';
import { scratchDir } from './scratchSpace.js';

export const testDatabaseUrl = process.env['TEST_DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/postgres';

let availability: Promise<string | undefined> | undefined;

/** undefined when PostgreSQL answers at TEST_DATABASE_URL, else why not. */
export function postgresUnavailableReason(): Promise<string | undefined> {
  availability ??= (async () => {
    // A server that is not there refuses at once; the ceiling is for a host that drops packets. It counts wall
    // time while the test process works synchronously (apiKeys.test.ts judged bootstrap keys with the estimator,
    // seconds on a busy machine, while this connected): at 3 s, whole PostgreSQL suites were skipped as absent.
    const client = new pg.Client({ connectionString: testDatabaseUrl, connectionTimeoutMillis: 30_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return undefined;
    } catch (error) {
      return `no PostgreSQL at ${testDatabaseUrl.replace(/:[^:@/]*@/, ':***@')}: ${(error as Error).message}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return availability;
}

async function onServer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A new, empty PostgreSQL database on the test server, owned by one test. */
export async function createScratchPostgres(): Promise<ScratchDatabase> {
  const name = `pets_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await onServer(async (client) => {
    await client.query(`CREATE DATABASE ${name}`);
    // A test database need not survive a crash of the server; without waiting
    // for the disk on each commit, writes cost a quarter (measured 16 -> 4 ms).
    await client.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  });
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      onServer((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A scratch PostgreSQL database and the service's db opened on it, both gone when the test ends. */
export async function scratchPostgresDatabase(t: Test, poolSize: number): Promise<{ db: Database; url: string }> {
  const scratch = await createScratchPostgres();
  t.teardown(() => scratch.drop());
  const db = await openDatabase({ url: scratch.url, poolSize });
  t.teardown(() => db.close());
  return { db, url: scratch.url };
}

/** A scratch data directory holding a migrated embedded database (a copy of the template: cheap). */
export async function migratedDataDir(prefix?: string): Promise<{ path: string; remove(): void }> {
  const dir = scratchDir(prefix);
  await copyEmbeddedTemplate(dir.path);
  return dir;
}

/** A scratch data directory holding an embedded database no migration has touched (a cheap copy, too). */
export async function unmigratedDataDir(): Promise<{ path: string; remove(): void }> {
  const dir = scratchDir();
  await copyEmbeddedTemplate(dir.path, 'empty');
  return dir;
}

export type Backend = 'postgres' | 'embedded';

export interface OpenedBackend {
  db: Database;
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * A database a test has handed back (OpenedBackend.close) with its schema as it got it is emptied and handed
 * out again; one the test closed itself, or whose schema it changed, goes. Measured with 20 of each in one
 * process (a pet inserted each time): a new embedded database, opened and closed, took 0.47 s of wall time
 * and 0.71 s of CPU (a 39 MB copy, PGlite started and stopped, the folder removed), one handed out again
 * 0.03 s and 0.04 s; a new PostgreSQL one 0.17 s of wall time (CREATE DATABASE, the migrations, DROP
 * DATABASE), one handed out again 0.06 s. What is still idle when the process's tests end goes then.
 */
interface Reusable {
  /** The schema as it was when this database was new (databaseReuse.ts's schemaFingerprint). */
  pristine: string;
}
interface IdleEmbedded extends Reusable {
  db: Database;
  dir: { path: string; remove(): void };
}
interface IdlePostgres extends Reusable {
  scratch: ScratchDatabase;
}
const idleEmbedded: IdleEmbedded[] = [];
const idlePostgres: IdlePostgres[] = [];
let drainScheduled = false;
/** Set when the process's tests have ended: a database handed back by a teardown after that goes at once. */
let drained = false;

function drainAtEnd(): void {
  if (drainScheduled) return;
  drainScheduled = true;
  tap.teardown(async () => {
    drained = true;
    for (const idle of idleEmbedded.splice(0)) {
      try {
        await idle.db.close();
      } finally {
        idle.dir.remove();
      }
    }
    await Promise.all(idlePostgres.splice(0).map((idle) => idle.scratch.drop()));
  });
}

/** The database with a close of its own that marks it as closed by the test (then never handed out again). */
function trackingClose(db: Database): { db: Database; closedByTest: () => boolean } {
  let closed = false;
  return {
    db: {
      ...db,
      close: () => {
        closed = true;
        return db.close();
      },
    },
    closedByTest: () => closed,
  };
}

async function openEmbeddedBackend(): Promise<OpenedBackend> {
  let idle = idleEmbedded.pop();
  if (idle === undefined) {
    const dir = await migratedDataDir();
    const db = await openDatabase({ dataDir: dir.path });
    idle = { db, dir, pristine: await schemaFingerprint(db) };
  }
  const { db, dir, pristine } = idle;
  const tracked = trackingClose(db);
  return {
    db: tracked.db,
    env: { DATA_DIR: dir.path },
    close: async () => {
      if (!drained && !tracked.closedByTest() && (await readyForReuse(db, pristine))) {
        drainAtEnd();
        idleEmbedded.push({ db, dir, pristine });
        return;
      }
      // The folder goes even when the database was closed already (a test
      // that hands it to a server process closes it first).
      try {
        if (!tracked.closedByTest()) await db.close();
      } finally {
        dir.remove();
      }
    },
  };
}

/** Empties a PostgreSQL database no session uses any more; false when one still does, or its schema changed. */
async function resetPostgres(url: string, pristine: string): Promise<boolean> {
  const db = await openDatabase({ url, poolSize: 1 });
  try {
    const { rows } = await db.query<{ others: number }>({
      text: `SELECT count(*)::int AS others FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    });
    return rows[0]!.others === 0 && (await readyForReuse(db, pristine));
  } finally {
    await db.close();
  }
}

async function openPostgresBackend(): Promise<OpenedBackend> {
  const idle = idlePostgres.pop();
  const scratch = idle?.scratch ?? (await createScratchPostgres());
  const opened = await openDatabase({ url: scratch.url, poolSize: 5 });
  let pristine = idle?.pristine;
  if (pristine === undefined) {
    await migrate(opened);
    pristine = await schemaFingerprint(opened);
  }
  const tracked = trackingClose(opened);
  return {
    db: tracked.db,
    env: { DATABASE_URL: scratch.url },
    close: async () => {
      const closedByTest = tracked.closedByTest();
      try {
        if (!closedByTest) await opened.close();
      } catch (error) {
        await scratch.drop();
        throw error;
      }
      if (!drained && !closedByTest && (await resetPostgres(scratch.url, pristine).catch(() => false))) {
        drainAtEnd();
        idlePostgres.push({ scratch, pristine });
        return;
      }
      await scratch.drop();
    },
  };
}

/** A migrated database of the given kind, as new (see Reusable), with the environment that points at it. */
export function openBackend(backend: Backend): Promise<OpenedBackend> {
  return backend === 'postgres' ? openPostgresBackend() : openEmbeddedBackend();
}
