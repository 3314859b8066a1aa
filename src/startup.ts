import { storeBootstrapKey, createFirstKeyIfNone } from './auth/provisioning.js';
import { countActiveApiKeys } from './db/apiKeys.js';
import type { Config } from './config.js';
import type { Database } from './db/index.js';
import { assertSchemaCurrent, migrate } from './db/migrations.js';

export interface PreparedDatabase {
  /** A key created because none existed; shown once to the operator. */
  firstKey?: string;
  activeKeys: number;
}

/**
 * Brings the database to a state the service can serve from: the embedded
 * one is migrated, a PostgreSQL one must already be (unless MIGRATE_ON_START),
 * and the bootstrap key is stored.
 */
export async function prepareDatabase(db: Database, config: Config): Promise<PreparedDatabase> {
  if (db.kind === 'embedded' || config.MIGRATE_ON_START) {
    await migrate(db);
  } else {
    await assertSchemaCurrent(db);
  }
  if (config.BOOTSTRAP_API_KEY) await storeBootstrapKey(db, config.BOOTSTRAP_API_KEY);
  const firstKey = db.kind === 'embedded' ? await createFirstKeyIfNone(db) : undefined;
  return { ...(firstKey ? { firstKey } : {}), activeKeys: await countActiveApiKeys(db) };
}
