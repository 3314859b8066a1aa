import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { buildApp, type AppConfig } from '../../src/app.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import type { Database } from '../../src/db/index.js';
import { testConfig, testLimits } from './app.js';

export interface LoggedApp {
  app: FastifyInstance;
  auth: { authorization: string };
  /** The log lines written so far, parsed. */
  logs(): Array<Record<string, unknown>>;
}

/**
 * The app over a database the test opened (and migrated), with one API key
 * and its log lines kept; the app closes when the test ends (the database is
 * the test's to close).
 */
export async function startLoggedApp(t: Test, db: Database, config: Partial<AppConfig> = {}): Promise<LoggedApp> {
  const key = generateApiKey();
  await insertApiKey(db, toStoredKey(`test-${Math.random().toString(36).slice(2)}`, key));
  const lines: string[] = [];
  const app = await buildApp(
    { ...testConfig, LOG_LEVEL: 'info', ...config },
    { db, logStream: { write: (line) => lines.push(line) }, limits: testLimits },
  );
  t.teardown(() => app.close());
  return {
    app,
    auth: { authorization: `Bearer ${key}` },
    logs: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
