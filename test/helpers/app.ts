import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { buildApp, type AppConfig } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import type { Database } from '../../src/db/index.js';
import { openBackend, postgresUnavailableReason, type Backend } from './databases.js';

// The defaults of every setting, so that a new one needs no edit here; a
// limit no test reaches unless it asks for a lower one.
export const testConfig: AppConfig = {
  ...loadConfig({}),
  BODY_LIMIT_BYTES: 65536,
  API_KEY_CACHE_SECONDS: 0,
  RESPONSE_VALIDATION: true,
  LOG_LEVEL: 'silent',
  RATE_LIMIT_MAX: 1_000_000,
};

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  key: string;
  auth: { authorization: string };
}

/** The app on a fresh database of the given kind, with one API key; closed when the test ends. */
export async function startTestApp(t: Test, backend: Backend, config: Partial<AppConfig> = {}): Promise<TestApp> {
  const opened = await openBackend(backend);
  const key = generateApiKey();
  await insertApiKey(opened.db, toStoredKey('test', key));
  const app = await buildApp({ ...testConfig, ...config }, { db: opened.db, logger: false });
  t.teardown(async () => {
    await app.close();
    await opened.close();
  });
  return { app, db: opened.db, key, auth: { authorization: `Bearer ${key}` } };
}

/** Runs body for each backend; the PostgreSQL one says why when it is skipped. */
export async function forEachBackend(t: Test, body: (t: Test, backend: Backend) => Promise<void>): Promise<void> {
  const reason = await postgresUnavailableReason();
  await t.test('PostgreSQL', reason ? { skip: reason } : {}, (t) => body(t, 'postgres'));
  await t.test('embedded (PGlite)', (t) => body(t, 'embedded'));
}
