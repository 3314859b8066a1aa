import { generateApiKey, toStoredKey } from '../auth/keys.js';
import { ConfigError, loadConfig } from '../config.js';
import { insertApiKey, listApiKeys, revokeApiKey } from '../db/apiKeys.js';
import { DataDirLockedError, openDatabase, type Database } from '../db/index.js';
import { assertSchemaCurrent, migrate, SchemaOutdatedError } from '../db/migrations.js';

const usage = `Usage: npm run apikey -- <command>
  create <name>         create a key; it is printed once, alone on the last line
  list                  list keys (never the keys themselves)
  revoke <name or id>   revoke a key; requests with it get 401`;

class UsageError extends Error {}

const namePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

async function create(db: Database, name: string | undefined): Promise<void> {
  if (!name || !namePattern.test(name)) throw new UsageError('A key name is 1 to 64 letters, digits, dots, dashes or underscores.');
  const key = generateApiKey();
  try {
    await insertApiKey(db, toStoredKey(name, key));
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new UsageError(`A key named ${name} exists already.`);
    throw error;
  }
  process.stdout.write(`Created API key ${name}. It is shown only now; store it safely:\n${key}\n`);
}

async function list(db: Database): Promise<void> {
  const keys = await listApiKeys(db);
  if (keys.length === 0) {
    process.stdout.write('No API keys.\n');
    return;
  }
  for (const key of keys) {
    const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active';
    process.stdout.write(`${key.id}\t${key.name}\t${key.keyPrefix}…\tcreated ${key.createdAt.toISOString()}\t${state}\n`);
  }
}

async function revoke(db: Database, nameOrId: string | undefined): Promise<void> {
  if (!nameOrId) throw new UsageError('Name the key to revoke, by name or id.');
  const revoked = await revokeApiKey(db, nameOrId);
  if (revoked.length === 0) throw new UsageError(`No active key has the name or id ${nameOrId}.`);
  for (const key of revoked) process.stdout.write(`Revoked ${key.id} ${key.name}\n`);
}

async function main(argv: string[]): Promise<void> {
  const [command, argument] = argv;
  if (!command || !['create', 'list', 'revoke'].includes(command)) throw new UsageError(usage);
  const config = loadConfig();
  const db = await openDatabase(config);
  try {
    if (db.kind === 'embedded') await migrate(db);
    else await assertSchemaCurrent(db);
    if (command === 'create') await create(db, argument);
    else if (command === 'list') await list(db);
    else await revoke(db, argument);
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known = [UsageError, ConfigError, DataDirLockedError, SchemaOutdatedError].some((type) => error instanceof type);
  process.stderr.write(`${known ? (error as Error).message : error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
