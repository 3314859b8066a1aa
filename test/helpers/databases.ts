import pg from 'pg';
import type { Test } from 'tap';
import { openDatabase, type Database } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrations.js';
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

/** A migrated database of the given kind, with the environment that points at it. */
export async function openBackend(backend: Backend): Promise<OpenedBackend> {
  if (backend === 'postgres') {
    const scratch = await createScratchPostgres();
    const db = await openDatabase({ url: scratch.url, poolSize: 5 });
    await migrate(db);
    return {
      db,
      env: { DATABASE_URL: scratch.url },
      close: async () => {
        try {
          await db.close();
        } finally {
          await scratch.drop();
        }
      },
    };
  }
  const dir = await migratedDataDir();
  const db = await openDatabase({ dataDir: dir.path });
  return {
    db,
    env: { DATA_DIR: dir.path },
    // The folder goes even when the database was closed already (a test
    // that hands it to a server process closes it first).
    close: async () => {
      try {
        await db.close();
      } finally {
        dir.remove();
      }
    },
  };
}
