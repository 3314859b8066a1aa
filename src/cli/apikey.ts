import { generateApiKey, toStoredKey } from '../auth/keys.js';
import { directDatabaseOptionsOf } from '../config/databaseOptions.js';
import { loadConfig } from '../config/load.js';
import { insertApiKey, listApiKeys, revokeApiKeyById, revokeApiKeyByName } from '../db/apiKeys.js';
import { openDatabase, type Database } from '../db/index.js';
import { assertSchemaCurrent, migrate, SchemaOutdatedError } from '../db/migrations.js';
import { isMainModule } from '../entryPoint.js';
import { describeFailure } from './failure.js';
import type { CliStreams } from './migrate.js';

const usage = `Usage: npm run apikey -- <command>
  create <name>         create a key; it is printed once, alone on the last line
  list                  list keys: id, name, fingerprint (SHA-256 prefix), created, state
  revoke <name>         revoke the key with this name; requests with it get 401
  revoke --id <id>      revoke the key with this id (the first column of list)`;

class UsageError extends Error {}

const namePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

async function create(db: Database, name: string | undefined, out: NodeJS.WritableStream): Promise<void> {
  if (!name || !namePattern.test(name))
    throw new UsageError('A key name is 1 to 64 letters, digits, dots, dashes or underscores.');
  const key = generateApiKey();
  try {
    await insertApiKey(db, toStoredKey(name, key));
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new UsageError(`A key named ${name} exists already.`);
    throw error;
  }
  out.write(`Created API key ${name}. It is shown only now; store it safely:\n${key}\n`);
}

async function list(db: Database, out: NodeJS.WritableStream): Promise<void> {
  const keys = await listApiKeys(db);
  if (keys.length === 0) {
    out.write('No API keys.\n');
    return;
  }
  for (const key of keys) {
    const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active';
    out.write(`${key.id}\t${key.name}\tsha256:${key.keyPrefix}\tcreated ${key.createdAt.toISOString()}\t${state}\n`);
  }
}

async function revoke(db: Database, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const [first, second, ...rest] = args;
  if (first === undefined || rest.length > 0 || (first === '--id') !== (second !== undefined))
    throw new UsageError(`Name the key to revoke: revoke <name>, or revoke --id <id>.\n${usage}`);
  let revoked;
  if (first === '--id') {
    if (!/^[1-9][0-9]{0,15}$/.test(second ?? '')) throw new UsageError('A key id is a positive integer (see list).');
    revoked = await revokeApiKeyById(db, Number(second));
    if (!revoked) throw new UsageError(`No active key has the id ${second}.`);
  } else {
    if (first.startsWith('-')) throw new UsageError(`Unknown option ${first}.\n${usage}`);
    revoked = await revokeApiKeyByName(db, first);
    if (!revoked) throw new UsageError(`No active key is named ${first}.`);
  }
  out.write(`Revoked ${revoked.id} ${revoked.name}\n`);
}

async function run(argv: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream): Promise<void> {
  const [command, argument] = argv;
  if (!command || !['create', 'list', 'revoke'].includes(command)) throw new UsageError(usage);
  const db = await openDatabase(directDatabaseOptionsOf(loadConfig(env), 'administration'));
  try {
    if (db.kind === 'embedded') await migrate(db);
    else await assertSchemaCurrent(db);
    if (command === 'create') await create(db, argument, out);
    else if (command === 'list') await list(db, out);
    else await revoke(db, argv.slice(1), out);
  } finally {
    await db.close();
  }
}

/** `npm run apikey -- <command>`; resolves with the exit code (2 for a usage error). */
export async function runApiKey(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  { out, err }: CliStreams = { out: process.stdout, err: process.stderr },
): Promise<number> {
  try {
    await run(argv, env, out);
    return 0;
  } catch (error) {
    err.write(`${describeFailure(error, [UsageError, SchemaOutdatedError])}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

if (isMainModule(import.meta.url)) process.exitCode = await runApiKey(process.argv.slice(2));
