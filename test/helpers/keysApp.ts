import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import { buildApp, type AppConfig } from '../../src/app.js';
import { issueKey } from '../../src/auth/provisioning.js';
import type { KeyTerms } from '../../src/db/apiKeys.js';
import type { Database } from '../../src/db/index.js';
import type { Statement } from '../../src/db/types.js';
import { noMetrics } from '../../src/observability/metrics.js';
import type { AuthFailureReason } from '../../src/observability/metrics.js';
import { testConfig, testLimits } from './app.js';
import { openBackend, type Backend, type OpenedBackend } from './databases.js';
import { emptyStore } from './emptyStore.js';

export interface KeysApp {
  app: FastifyInstance;
  db: Database;
  backend: OpenedBackend;
  /** Every statement the app ran, in order. */
  statements: Statement[];
  /** The reasons authentication failures were counted under. */
  failures: AuthFailureReason[];
  /** The app's clock: Date.now() plus this many ms (a skew, unless the database's time passes too: passTime). */
  clock: { aheadMs: number };
  /** Time passes by ms for the app and for the keys stored (see passTimeInDatabase). */
  passTime(ms: number): Promise<void>;
  issue(name: string, terms?: KeyTerms): Promise<string>;
  get(url: string, key: string): Promise<LightMyRequestResponse>;
  post(url: string, key: string, body: object): Promise<LightMyRequestResponse>;
  /**
   * Closes the app (it writes the last uses it holds) and, for the embedded
   * database, which admits one process at a time, the database too: the CLI
   * can then open it through backend.env.
   */
  release(): Promise<void>;
}

/**
 * Time passes by ms for the keys stored: each of their times moves back by
 * ms, as if the database's clock had moved on, which a test cannot move.
 * Announcing nothing (triggers off for the transaction): time passing
 * notifies no one, so a cached key must meet its expiry by itself.
 */
export async function passTimeInDatabase(db: Database, ms: number): Promise<void> {
  const shift = `${Math.trunc(ms)} * interval '1 millisecond'`;
  await db.transaction((tx) =>
    tx.execScript(`SET LOCAL session_replication_role = replica;
      UPDATE api_keys SET created_at = created_at - ${shift}, expires_at = expires_at - ${shift},
        replaced_at = replaced_at - ${shift}, revoked_at = revoked_at - ${shift}, last_used_at = last_used_at - ${shift};`),
  );
}

/** Watches every query the app sends to the database, so a test can say none was sent. */
function counting(db: Database, statements: Statement[]): Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'query')
        return (statement: Statement, values?: readonly unknown[]) => {
          statements.push(statement);
          return target.query(statement, values);
        };
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * One database of the given kind for the tests under t (closed when t ends), for startKeysApp's `on`: a
 * database costs each test more than its requests do (PGlite: 0.35 s of CPU to open a copy; PostgreSQL: a
 * second to create and migrate one), and emptying it gives the next test a store like a fresh one's.
 */
export async function sharedKeysDatabase(t: Test, kind: Backend): Promise<{ kind: Backend; backend: OpenedBackend }> {
  const backend = await openBackend(kind);
  t.teardown(() => backend.close());
  return { kind, backend };
}

/** Empties the store and the keys, ids from 1 again: what a test on a shared database starts from. */
async function emptied(backend: OpenedBackend): Promise<OpenedBackend> {
  await emptyStore(backend.db);
  await backend.db.query({ text: 'TRUNCATE api_keys RESTART IDENTITY CASCADE' });
  return backend;
}

/**
 * The app with a clock the test moves and its queries watched: on a fresh database of the given kind, or on
 * one shared by the tests (sharedKeysDatabase), emptied first and left open when the test ends; a test that
 * releases its database to the CLI (release) needs its own.
 */
export async function startKeysApp(
  t: Test,
  kind: Backend | { kind: Backend; backend: OpenedBackend },
  config: Partial<AppConfig> = {},
): Promise<KeysApp> {
  const shared = typeof kind === 'object';
  const backend = shared ? await emptied(kind.backend) : await openBackend(kind);
  const statements: Statement[] = [];
  const failures: AuthFailureReason[] = [];
  const clock = { aheadMs: 0 };
  const app = await buildApp(
    { ...testConfig, ...config },
    {
      db: counting(backend.db, statements),
      logger: false,
      limits: testLimits,
      now: () => Date.now() + clock.aheadMs,
      metrics: { ...noMetrics, authenticationFailed: (reason) => failures.push(reason) },
    },
  );
  let released = false;
  t.teardown(async () => {
    if (released) {
      // The embedded database is closed already: only its folder is left to remove.
      await backend.close().catch(() => undefined);
      return;
    }
    await app.close();
    if (!shared) await backend.close();
  });
  return {
    app,
    db: backend.db,
    backend,
    statements,
    failures,
    clock,
    release: async () => {
      if (shared)
        throw new Error(
          'release closes the database: the test needs one of its own (startKeysApp without a shared one)',
        );
      released = true;
      await app.close();
      if (kind === 'embedded') await backend.db.close();
    },
    passTime: async (ms) => {
      clock.aheadMs += ms;
      await passTimeInDatabase(backend.db, ms);
    },
    issue: async (name, terms) => (await issueKey(backend.db, name, terms)).key,
    get: (url, key) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } }),
    post: (url, key, body) =>
      app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload: body }),
  };
}

export const newPet = { name: 'Rex', categoryId: 1 };
