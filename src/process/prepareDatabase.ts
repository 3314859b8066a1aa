import { storeBootstrapKey, createFirstKeyIfNone } from '../auth/provisioning.js';
import { countActiveApiKeys } from '../db/apiKeys.js';
import { directDatabaseOptionsOf } from '../config/databaseOptions.js';
import type { Config } from '../config/load.js';
import { openDatabase, ReadOnlyDatabaseError, readOnlyReason, type Database } from '../db/index.js';
import { assertSchemaCurrent, migrate } from '../db/migrations.js';

export interface PreparedDatabase {
  /** A key created because none existed; shown once to the operator. */
  firstKey?: string;
  activeKeys: number;
}

/** Refuses a primary that cannot take writes, in one line naming the setting. */
async function assertWritable(db: Database, setting: string): Promise<void> {
  const reason = await readOnlyReason(db);
  if (reason === undefined) return;
  const advice = setting === 'DATABASE_URL' ? ' (replicas go in DATABASE_READ_URL)' : '';
  throw new ReadOnlyDatabaseError(
    `${setting} points at a database that ${reason}, but the service writes there: point it at the primary${advice}.`,
  );
}

/** Migrations on a connection of their own when DATABASE_DIRECT_URL is set, else on db. */
async function migrateAtStart(db: Database, config: Config): Promise<void> {
  if (!config.DATABASE_DIRECT_URL) {
    await migrate(db);
    return;
  }
  const direct = await openDatabase(directDatabaseOptionsOf(config, 'migrations'));
  try {
    await assertWritable(direct, 'DATABASE_DIRECT_URL');
    await migrate(direct);
  } finally {
    await direct.close();
  }
}

/**
 * Brings the database to a state the service can serve from: a PostgreSQL
 * primary must take writes; the embedded database is migrated, a PostgreSQL
 * one must already be (unless MIGRATE_ON_START); the bootstrap key is stored.
 */
export async function prepareDatabase(db: Database, config: Config): Promise<PreparedDatabase> {
  if (db.kind === 'postgres') await assertWritable(db, 'DATABASE_URL');
  if (db.kind === 'embedded') await migrate(db);
  else if (config.MIGRATE_ON_START) await migrateAtStart(db, config);
  else await assertSchemaCurrent(db);
  if (config.BOOTSTRAP_API_KEY) await storeBootstrapKey(db, config.BOOTSTRAP_API_KEY);
  const firstKey = db.kind === 'embedded' ? await createFirstKeyIfNone(db) : undefined;
  return { ...(firstKey ? { firstKey } : {}), activeKeys: await countActiveApiKeys(db) };
}
