import { openPostgres } from './postgres.js';
import type { Database, DatabaseOptions } from './types.js';

export type {
  Database,
  DatabaseOptions,
  EmbeddedOptions,
  KeyChange,
  KeyChangeFeed,
  PoolStatus,
  PostgresOptions,
  Queryable,
  ReadStatus,
  ReplicaOptions,
  ReplicaState,
  RideThroughReport,
} from './types.js';
export { ReadOnlyDatabaseError, readOnlyReason } from './replication.js';
export { DiskFullError } from './diskSpace.js';
export { DatabaseUnavailableError } from './unavailability.js';
export { UnstorableValueError } from './dataException.js';
export { DataDirLockedError } from './dataDirLock.js';
export { DataDirAccessError } from './dataDirPath.js';
export { noKeyChanges } from './keyChanges.js';

/**
 * PostgreSQL when given a URL, else the embedded database in dataDir. PGlite
 * is loaded only for the embedded database: a PostgreSQL deployment never
 * pays its load time or its memory.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if ('url' in options) return openPostgres(options);
  const { openEmbedded } = await import('./embedded.js');
  return openEmbedded(options);
}
export { trackAvailability, reasonOf as unavailabilityOf, type OutageListener } from './outageTracking.js';
