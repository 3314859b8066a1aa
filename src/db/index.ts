import type { Config } from '../config.js';
import { openEmbedded } from './embedded.js';
import { openPostgres } from './postgres.js';
import type { Database } from './types.js';

export type { Database, Queryable } from './types.js';
export { DatabaseUnavailableError } from './types.js';
export { DataDirLockedError } from './dataDirLock.js';

export interface OpenOptions {
  onPoolError?: (error: Error) => void;
}

/** PostgreSQL when DATABASE_URL is set, the embedded database in DATA_DIR otherwise. */
export async function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DATABASE_POOL_SIZE'>,
  options: OpenOptions = {},
): Promise<Database> {
  if (config.DATABASE_URL) {
    return openPostgres({
      connectionString: config.DATABASE_URL,
      poolSize: config.DATABASE_POOL_SIZE,
      ...(options.onPoolError ? { onError: options.onPoolError } : {}),
    });
  }
  return openEmbedded(config.DATA_DIR);
}
