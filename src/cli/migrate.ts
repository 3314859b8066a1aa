import { ConfigError, loadConfig } from '../config.js';
import { DataDirLockedError, openDatabase } from '../db/index.js';
import { migrate } from '../db/migrations.js';

/** `npm run migrate`: brings the configured database to the current schema; non-zero exit on any failure. */
async function main(): Promise<void> {
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    const applied = await migrate(db);
    const names = applied.map((migration) => `${String(migration.version).padStart(4, '0')}_${migration.name}`);
    process.stdout.write(applied.length ? `Applied ${names.join(', ')}\n` : 'The database schema is already current.\n');
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  const known = error instanceof ConfigError || error instanceof DataDirLockedError;
  process.stderr.write(`Migration failed: ${known || !(error instanceof Error) ? String((error as Error).message ?? error) : error.stack}\n`);
  process.exit(1);
});
