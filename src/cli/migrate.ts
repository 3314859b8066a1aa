import { directDatabaseOptionsOf } from '../config/databaseOptions.js';
import { loadConfig } from '../config/load.js';
import { openDatabase, ReadOnlyDatabaseError, readOnlyReason } from '../db/index.js';
import { migrate } from '../db/migrations.js';
import { isMainModule } from '../entryPoint.js';
import { describeFailure } from './failure.js';

export interface CliStreams {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

const processStreams: CliStreams = { out: process.stdout, err: process.stderr };

const usage = `Usage: npm run migrate
  brings the primary (DATABASE_DIRECT_URL, else DATABASE_URL; or DATA_DIR) to the current schema`;

/**
 * `npm run migrate`: brings the primary to the current schema, through
 * DATABASE_DIRECT_URL when set (never through a transaction pooler); the
 * exit code is non-zero on any failure.
 */
export async function runMigrate(
  env: NodeJS.ProcessEnv = process.env,
  { out, err }: CliStreams = processStreams,
  argv: readonly string[] = [],
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out.write(`${usage}\n`);
    return 0;
  }
  try {
    const config = loadConfig(env);
    const db = await openDatabase(directDatabaseOptionsOf(config, 'migrations'));
    try {
      const readOnly = db.kind === 'postgres' ? await readOnlyReason(db) : undefined;
      if (readOnly) {
        const setting = config.DATABASE_DIRECT_URL ? 'DATABASE_DIRECT_URL' : 'DATABASE_URL';
        throw new ReadOnlyDatabaseError(`${setting} points at a database that ${readOnly}: migrate the primary.`);
      }
      const applied = await migrate(db);
      const names = applied.map((migration) => `${String(migration.version).padStart(4, '0')}_${migration.name}`);
      out.write(applied.length ? `Applied ${names.join(', ')}\n` : 'The database schema is already current.\n');
      return 0;
    } finally {
      await db.close();
    }
  } catch (error) {
    err.write(`Migration failed: ${describeFailure(error)}\n`);
    return 1;
  }
}

if (isMainModule(import.meta.url))
  process.exitCode = await runMigrate(process.env, processStreams, process.argv.slice(2));
