import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { buildApp, type AppConfig, type AppDeps } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import type { HttpLimitOverrides } from '../../src/http/limits.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import { noKeyChanges, type Database } from '../../src/db/index.js';
import { openBackend, postgresUnavailableReason, type Backend } from './databases.js';

// The defaults of every setting, so that a new one needs no edit here; a
// limit no test reaches unless it asks for a lower one.
export const testConfig: AppConfig = {
  ...loadConfig({}),
  API_KEY_CACHE_SECONDS: 0,
  LOG_LEVEL: 'silent',
  RATE_LIMIT_MAX: 1_000_000,
  // A loaded test machine can stall the event loop; only the load-shedding tests shed.
  LOAD_SHED_EVENT_LOOP_DELAY_MS: 0,
};

/** Test only: what every test app's limits replace (none today; AppDeps.limits for one test's own). */
export const testLimits: HttpLimitOverrides = {};

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  key: string;
  auth: { authorization: string };
}

/** The app on a fresh database of the given kind, with one API key; closed when the test ends. */
export async function startTestApp(
  t: Test,
  backend: Backend,
  config: Partial<AppConfig> = {},
  deps: Omit<AppDeps, 'db'> = {},
): Promise<TestApp> {
  const opened = await openBackend(backend);
  const key = generateApiKey();
  await insertApiKey(opened.db, toStoredKey('test', key));
  const app = await buildApp(
    { ...testConfig, ...config },
    { db: opened.db, logger: false, limits: testLimits, ...deps },
  );
  t.teardown(async () => {
    await app.close();
    await opened.close();
  });
  return { app, db: opened.db, key, auth: { authorization: `Bearer ${key}` } };
}

/**
 * A database for tests that need none (docs, the spec, CORS preflights):
 * any use fails the test loudly instead of costing an embedded database.
 */
export const noDatabase: Database = {
  kind: 'postgres',
  query: () => Promise.reject(new Error('this test said it needs no database, yet a query ran')),
  execScript: () => Promise.reject(new Error('this test said it needs no database, yet a script ran')),
  transaction: () => Promise.reject(new Error('this test said it needs no database, yet a transaction ran')),
  replica: () => undefined,
  readStatus: () => ({ reads: 'primary', replicas: [] }),
  poolStatus: () => undefined,
  read: (read) => read(),
  cancelInFlight: () => Promise.resolve(0),
  keyChanges: noKeyChanges,
  close: () => Promise.resolve(),
};

/** The app without a database (see noDatabase): for tests whose requests never reach storage. */
export async function startAppWithoutDatabase(t: Test, config: Partial<AppConfig> = {}): Promise<FastifyInstance> {
  const app = await buildApp({ ...testConfig, ...config }, { db: noDatabase, logger: false, limits: testLimits });
  t.teardown(() => app.close());
  return app;
}

/** Runs body for each backend; the PostgreSQL one says why when it is skipped. */
export async function forEachBackend(t: Test, body: (t: Test, backend: Backend) => Promise<void>): Promise<void> {
  const reason = await postgresUnavailableReason();
  await t.test('PostgreSQL', reason ? { skip: reason } : {}, (t) => body(t, 'postgres'));
  await t.test('embedded (PGlite)', (t) => body(t, 'embedded'));
}
