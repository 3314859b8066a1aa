import { parseArgs, type ParseArgsConfig } from 'node:util';
import { issueKey, rotateKey } from '../auth/provisioning.js';
import { directDatabaseOptionsOf } from '../config/databaseOptions.js';
import { loadConfig } from '../config/load.js';
import { listApiKeys, revokeApiKeyById, revokeApiKeyByName, type KeyTerms } from '../db/apiKeys.js';
import { DataDirLockedError, openDatabase, type Database } from '../db/index.js';
import { sendCommand } from '../control/channel.js';
import { findControlSocket } from '../control/socketPath.js';
import { assertSchemaCurrent, migrate, SchemaOutdatedError } from '../db/migrations.js';
import { isMainModule } from '../entryPoint.js';
import { declaredScopes, loadOpenApiDocument } from '../openapi/document.js';
import { keyAsJson, keyAsLine } from './apikeyList.js';
import { parseDuration } from './duration.js';
import { describeFailure } from './failure.js';
import type { CliStreams } from './migrate.js';

const usage = `Usage: npm run apikey -- <command>
  create <name> [--scopes pets:read,pets:write] [--expires-in <duration>]
                        create a key (every scope, no expiry unless told); it is printed once,
                        alone on the last line. Durations: 90d, 12h, 30m, 45s
  rotate <name> --overlap <duration> [--expires-in <duration>]
                        a new key for the name, with its scopes and lifetime, alone on the last
                        line; the old key works until the overlap ends (0s: at once)
  list [--json]         list keys: id, name, fingerprint (SHA-256 prefix), created, state, scopes,
                        last use; --json: [{name, scopes, createdAt, expiresAt, lastUsedAt, revokedAt}]
  revoke <name>         revoke the key with this name (and a rotated one in its overlap); requests get 401
  revoke --id <id>      revoke the key with this id (the first column of list)`;

class UsageError extends Error {}

const namePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function options<const T extends NonNullable<ParseArgsConfig['options']>>(args: string[], allowed: T) {
  try {
    return parseArgs({ args, options: allowed, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${usage}`);
  }
}

function durationOption(text: string | undefined, option: string, zero: 'allowed' | 'refused'): number | undefined {
  if (text === undefined) return undefined;
  const seconds = parseDuration(text);
  if (seconds === undefined || (zero === 'refused' && seconds === 0))
    throw new UsageError(`--${option} takes a duration such as 90d, 12h, 30m or 45s; got ${text}.`);
  return seconds;
}

/** The scopes of --scopes, each one the spec declares; undefined: unrestricted. */
function scopesOption(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const known = declaredScopes(loadOpenApiDocument());
  const scopes = [...new Set(text.split(',').map((scope) => scope.trim()))];
  const unknown = scopes.filter((scope) => !known.includes(scope));
  if (scopes.length === 0 || unknown.length > 0)
    throw new UsageError(`Unknown scope ${unknown.join(', ') || '(none)'}; openapi.yaml declares ${known.join(', ')}.`);
  return scopes.sort();
}

function validName(name: string | undefined): string {
  if (!name || !namePattern.test(name))
    throw new UsageError('A key name is 1 to 64 letters, digits, dots, dashes or underscores.');
  return name;
}

async function create(db: Database, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { values, positionals } = options(args, { scopes: { type: 'string' }, 'expires-in': { type: 'string' } });
  if (positionals.length > 1) throw new UsageError(`create takes one name.\n${usage}`);
  const name = validName(positionals[0]);
  const scopes = scopesOption(values.scopes);
  const expiresInSeconds = durationOption(values['expires-in'], 'expires-in', 'refused');
  const terms: KeyTerms = {
    ...(scopes ? { scopes } : {}),
    ...(expiresInSeconds === undefined ? {} : { expiresInSeconds }),
  };
  let issued;
  try {
    issued = await issueKey(db, name, terms);
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new UsageError(`A key named ${name} exists already.`);
    throw error;
  }
  const until = issued.record.expiresAt ? `, valid until ${issued.record.expiresAt.toISOString()}` : '';
  out.write(`Created API key ${name}${until}. It is shown only now; store it safely:\n${issued.key}\n`);
}

async function rotate(db: Database, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { values, positionals } = options(args, { overlap: { type: 'string' }, 'expires-in': { type: 'string' } });
  if (positionals.length !== 1 || values.overlap === undefined)
    throw new UsageError(`rotate takes a name and --overlap <duration>.\n${usage}`);
  const name = validName(positionals[0]);
  const overlap = durationOption(values.overlap, 'overlap', 'allowed') ?? 0;
  const expiresIn = durationOption(values['expires-in'], 'expires-in', 'refused');
  const rotation = await rotateKey(db, name, overlap, expiresIn);
  if (!rotation) throw new UsageError(`No active key is named ${name}.`);
  const oldUntil = rotation.replaced.expiresAt?.toISOString() ?? 'now';
  out.write(
    `Rotated API key ${name}: the old key works until ${oldUntil}. The new key is shown only now; store it safely:\n${rotation.key}\n`,
  );
}

async function list(db: Database, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { values, positionals } = options(args, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`list takes no name.\n${usage}`);
  const keys = await listApiKeys(db);
  if (values.json) {
    const allScopes = declaredScopes(loadOpenApiDocument());
    out.write(
      `${JSON.stringify(
        keys.map((key) => keyAsJson(key, allScopes)),
        null,
        2,
      )}\n`,
    );
    return;
  }
  if (keys.length === 0) {
    out.write('No API keys.\n');
    return;
  }
  const now = Date.now();
  for (const key of keys) out.write(`${keyAsLine(key, now)}\n`);
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

/** One command on an open database, migrated or checked; what it writes goes to out. */
async function runOn(db: Database, command: string, args: string[], out: NodeJS.WritableStream): Promise<void> {
  if (command === 'create') await create(db, args, out);
  else if (command === 'rotate') await rotate(db, args, out);
  else if (command === 'list') await list(db, args, out);
  else await revoke(db, args, out);
}

const databaseCommands = ['create', 'rotate', 'list', 'revoke'];

/**
 * A command on a database the caller opened (and closes); resolves with the
 * exit code, as runApiKey does: what a running server does for the CLI.
 */
export async function runApiKeyCommand(db: Database, argv: string[], { out, err }: CliStreams): Promise<number> {
  try {
    const [command, ...args] = argv;
    if (!command || !databaseCommands.includes(command)) throw new UsageError(usage);
    await runOn(db, command, args, out);
    return 0;
  } catch (error) {
    return failed(error, err);
  }
}

function failed(error: unknown, err: NodeJS.WritableStream): number {
  err.write(`${describeFailure(error, [UsageError, SchemaOutdatedError])}\n`);
  return error instanceof UsageError ? 2 : 1;
}

/**
 * A server running on the embedded database holds its lock: it runs the
 * command itself (runApiKeyCommand), sent over its control socket (owner
 * only, src/control), and its output and exit code come back.
 */
async function sendToServer(dataDir: string, argv: string[], streams: CliStreams, locked: DataDirLockedError) {
  const socket = findControlSocket(dataDir);
  if (socket === undefined) throw locked;
  try {
    return await sendCommand(socket, argv, streams);
  } catch (error) {
    // A socket nobody listens on: the holder is still starting, or is no server.
    if (['ECONNREFUSED', 'ENOENT'].includes((error as NodeJS.ErrnoException).code ?? '')) throw locked;
    throw error;
  }
}

/** Runs the command here, or in the running server that holds the embedded database; resolves with its exit code. */
async function run(argv: string[], env: NodeJS.ProcessEnv, streams: CliStreams): Promise<number> {
  const [command, ...args] = argv;
  if (!command || !databaseCommands.includes(command)) throw new UsageError(usage);
  const config = loadConfig(env);
  let db: Database;
  try {
    db = await openDatabase(directDatabaseOptionsOf(config, 'administration'));
  } catch (error) {
    if (error instanceof DataDirLockedError) return sendToServer(config.DATA_DIR, argv, streams, error);
    throw error;
  }
  try {
    if (db.kind === 'embedded') await migrate(db);
    else await assertSchemaCurrent(db);
    await runOn(db, command, args, streams.out);
    return 0;
  } finally {
    await db.close();
  }
}

/** `npm run apikey -- <command>`; resolves with the exit code (2 for a usage error). */
export async function runApiKey(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  streams: CliStreams = { out: process.stdout, err: process.stderr },
): Promise<number> {
  try {
    return await run(argv, env, streams);
  } catch (error) {
    return failed(error, streams.err);
  }
}

if (isMainModule(import.meta.url)) process.exitCode = await runApiKey(process.argv.slice(2));
