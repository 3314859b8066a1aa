import { parseArgs, type ParseArgsConfig } from 'node:util';
import { generateApiKey } from '../auth/keys.js';
import { issueKey, rotateKey, type IssuedKey, type Rotation } from '../auth/provisioning.js';
import { directDatabaseOptionsOf } from '../config/databaseOptions.js';
import { loadConfig } from '../config/load.js';
import {
  listApiKeysWithHistory,
  revokeApiKeyById,
  revokeApiKeyByName,
  revokeApiKeysWithoutChecksum,
  type ApiKeyRecord,
  type KeyTerms,
} from '../db/apiKeys.js';
import { DataDirLockedError, openDatabase, type Database } from '../db/index.js';
import { ControlBusyError, ControlTimeoutError, sendCommand, UnprovenServerError } from '../control/channel.js';
import { findControlSocket, UntrustedControlSocketError } from '../control/socketPath.js';
import { assertSchemaCurrent, migrate, SchemaOutdatedError } from '../db/migrations.js';
import { isMainModule } from '../entryPoint.js';
import { declaredScopes, loadOpenApiDocument } from '../openapi/document.js';
import { keyAsJson, keyAsLine, listHeader } from './apikeyList.js';
import { boundedDuration, formatDuration, type DurationRule } from './duration.js';
import { describeFailure } from './failure.js';
import type { CliStreams } from './migrate.js';

/**
 * The longest life a key may be given: a year (366 days, for leap years),
 * as GitHub caps its tokens'; a leaked key that expires stops working by
 * itself. A key created without --expires-in never expires.
 */
const maxLifetimeSeconds = 366 * 86_400;
/**
 * The longest overlap of a rotation: a month is time enough for every
 * consumer to deploy the new key; two keys valid for longer are two secrets
 * to guard. The overlap never outlives the old key's own expiry.
 */
const maxOverlapSeconds = 30 * 86_400;

const expiresInRule: DurationRule = { option: 'expires-in', zero: false, maxSeconds: maxLifetimeSeconds };
const overlapRule: DurationRule = { option: 'overlap', zero: true, maxSeconds: maxOverlapSeconds };

const usage = `Usage: npm run apikey -- <command>
  create <name> [--scopes pets:read,pets:write] [--expires-in <duration>]
                        create a key (every scope, no expiry unless told); it is printed once,
                        alone on the last line. Durations: 90d, 12h, 30m, 45s; --expires-in at
                        most ${formatDuration(maxLifetimeSeconds)}
  rotate <name> --overlap <duration> [--expires-in <duration>]
                        a new key for the name, with its scopes and lifetime, alone on the last
                        line; the old key works until the overlap ends (0s: at once; at most
                        ${formatDuration(maxOverlapSeconds)}, never past its own expiry)
  list [--json]         list keys, with a header: id, name, fingerprint (SHA-256 prefix), format
                        (checksummed, legacy or unknown), created, state, scopes (* for every
                        scope), last use, the id of the key it replaced in a rotation; --json:
                        [{id, name, fingerprint, format, scopes, createdAt, expiresAt, lastUsedAt,
                        revokedAt, replaces}]
  revoke <name>         revoke the key with this name (and a rotated one in its overlap); requests get 401
  revoke --id <id>      revoke the key with this id (the first column of list)
  revoke --legacy       revoke every key without a checksum (format legacy in list)
  new                   print a fresh key without storing it (for BOOTSTRAP_API_KEY); needs no database
  <command> --help      this text`;

class UsageError extends Error {}

const namePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * `--option -1` as `--option=-1`: parseArgs takes a value that starts with
 * a dash for an option, and refuses it as ambiguous without naming the
 * form the option takes; this way the option's own check names it.
 */
function joinDashedValues(args: string[], allowed: NonNullable<ParseArgsConfig['options']>): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    const next = args[index + 1];
    const option = arg.startsWith('--') ? allowed[arg.slice(2)] : undefined;
    if (option?.type === 'string' && next?.startsWith('-') && next !== '--') {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else joined.push(arg);
  }
  return joined;
}

/** Refuses an option given twice: parseArgs keeps the last value silently, and the first may be what was meant. */
function refuseRepeats(tokens: ReadonlyArray<{ kind: string; name?: string }>): void {
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} was given more than once: give it once.`);
    seen.add(token.name);
  }
}

function options<const T extends NonNullable<ParseArgsConfig['options']>>(args: string[], allowed: T) {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinDashedValues(args, allowed),
      options: allowed,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${usage}`);
  }
  refuseRepeats(parsed.tokens);
  return parsed;
}

function durationOption(text: string | undefined, rule: DurationRule): number | undefined {
  if (text === undefined) return undefined;
  const seconds = boundedDuration(text, rule);
  if (typeof seconds !== 'number') throw new UsageError(seconds.problem);
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

/** What create prints: computed inside its transaction, so a failure here stores nothing. */
function createdText({ key, record }: IssuedKey): string {
  const until = record.expiresAt ? `, valid until ${record.expiresAt.toISOString()}` : '';
  return `Created API key ${record.name}${until}. It is shown only now; store it safely:\n${key}\n`;
}

async function create(db: Database, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { values, positionals } = options(args, { scopes: { type: 'string' }, 'expires-in': { type: 'string' } });
  if (positionals.length > 1) throw new UsageError(`create takes one name.\n${usage}`);
  const name = validName(positionals[0]);
  const scopes = scopesOption(values.scopes);
  const expiresInSeconds = durationOption(values['expires-in'], expiresInRule);
  const terms: KeyTerms = {
    ...(scopes ? { scopes } : {}),
    ...(expiresInSeconds === undefined ? {} : { expiresInSeconds }),
  };
  let text;
  try {
    text = await issueKey(db, name, terms, createdText);
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new UsageError(`A key named ${name} exists already.`);
    throw error;
  }
  out.write(text);
}

/** What rotate prints: computed inside its transaction, so a failure here rotates nothing. */
function rotatedText({ key, record, replaced }: Rotation): string {
  const oldUntil = replaced.expiresAt?.toISOString() ?? 'now';
  return `Rotated API key ${record.name}: the old key works until ${oldUntil}. The new key is shown only now; store it safely:\n${key}\n`;
}

/** The new key inherits the old one's lifetime, unless that is beyond the bound (a key stored before it). */
function checkInheritedLifetime(seconds: number | undefined, current: ApiKeyRecord): void {
  if (seconds === undefined || seconds <= maxLifetimeSeconds) return;
  throw new UsageError(
    `The key named ${current.name} was given a lifetime beyond ${formatDuration(maxLifetimeSeconds)}, ` +
      `which its replacement would inherit: give it one with --expires-in (at most ${formatDuration(maxLifetimeSeconds)}).`,
  );
}

async function rotate(db: Database, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { values, positionals } = options(args, { overlap: { type: 'string' }, 'expires-in': { type: 'string' } });
  if (positionals.length !== 1 || values.overlap === undefined)
    throw new UsageError(`rotate takes a name and --overlap <duration>.\n${usage}`);
  const name = validName(positionals[0]);
  const overlapSeconds = durationOption(values.overlap, overlapRule) ?? 0;
  const expiresInSeconds = durationOption(values['expires-in'], expiresInRule);
  const terms = {
    overlapSeconds,
    ...(expiresInSeconds === undefined ? {} : { expiresInSeconds }),
    checkInherited: checkInheritedLifetime,
  };
  const text = await rotateKey(db, name, terms, rotatedText);
  if (text === undefined) throw new UsageError(`No active key is named ${name}.`);
  out.write(text);
}

async function list(db: Database, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const { values, positionals } = options(args, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`list takes no name.\n${usage}`);
  const keys = await listApiKeysWithHistory(db);
  if (values.json) {
    out.write(`${JSON.stringify(keys.map(keyAsJson), null, 2)}\n`);
    return;
  }
  if (keys.length === 0) {
    out.write('No API keys.\n');
    return;
  }
  const now = Date.now();
  out.write([listHeader, ...keys.map((key) => keyAsLine(key, now))].map((line) => `${line}\n`).join(''));
}

/** One line per key: its id and fingerprint say which row, whatever the name looks like. */
function revokedText(keys: readonly ApiKeyRecord[]): string {
  return keys
    .map((key) => `Revoked key id ${key.id} (name ${key.name}, fingerprint sha256:${key.keyPrefix})\n`)
    .join('');
}

async function revoke(db: Database, args: string[], out: NodeJS.WritableStream): Promise<void> {
  const [first, second, ...rest] = args;
  if (first === '--legacy' && second === undefined) {
    const revoked = await revokeApiKeysWithoutChecksum(db);
    out.write(revoked.length ? revokedText(revoked) : 'No active legacy key.\n');
    return;
  }
  if (first === undefined || rest.length > 0 || (first === '--id') !== (second !== undefined))
    throw new UsageError(`Name the key to revoke: revoke <name>, revoke --id <id>, or revoke --legacy.\n${usage}`);
  let revoked: ApiKeyRecord[];
  if (first === '--id') {
    if (!/^[1-9][0-9]{0,15}$/.test(second ?? '')) throw new UsageError('A key id is a positive integer (see list).');
    const key = await revokeApiKeyById(db, Number(second));
    if (!key) throw new UsageError(`No active key has the id ${second}.`);
    revoked = [key];
  } else {
    if (first.startsWith('-')) throw new UsageError(`Unknown option ${first}.\n${usage}`);
    revoked = await revokeApiKeyByName(db, first);
    if (revoked.length === 0) throw new UsageError(`No active key is named ${first}.`);
  }
  out.write(revokedText(revoked));
}

const databaseCommands = ['create', 'rotate', 'list', 'revoke'];

/** Whether the arguments ask for help (before a `--`, after which everything is an argument). */
function asksForHelp(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** One command on an open database, migrated or checked; what it writes goes to out. */
async function runOn(db: Database, command: string, args: string[], out: NodeJS.WritableStream): Promise<void> {
  if (command === 'create') await create(db, args, out);
  else if (command === 'rotate') await rotate(db, args, out);
  else if (command === 'list') await list(db, args, out);
  else await revoke(db, args, out);
}

/**
 * A command on a database the caller opened (and closes); resolves with the
 * exit code, as runApiKey does.
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
  err.write(
    `${describeFailure(error, [
      UsageError,
      SchemaOutdatedError,
      UntrustedControlSocketError,
      UnprovenServerError,
      ControlBusyError,
      ControlTimeoutError,
    ])}\n`,
  );
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
    return await sendCommand(socket.path, argv, socket.secret, streams);
  } catch (error) {
    // A socket nobody listens on: the holder is still starting, or is no server.
    if (['ECONNREFUSED', 'ENOENT'].includes((error as NodeJS.ErrnoException).code ?? '')) throw locked;
    throw error;
  }
}

/** Runs the command here, or in the running server that holds the embedded database; resolves with its exit code. */
async function run(argv: string[], env: NodeJS.ProcessEnv, streams: CliStreams): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'new' && args.length === 0) {
    streams.out.write(`${generateApiKey()}\n`);
    return 0;
  }
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

/** `npm run apikey -- <command>`; resolves with the exit code (2 for a usage error, 0 for --help). */
export async function runApiKey(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  streams: CliStreams = { out: process.stdout, err: process.stderr },
): Promise<number> {
  if (asksForHelp(argv)) {
    streams.out.write(`${usage}\n`);
    return 0;
  }
  try {
    return await run(argv, env, streams);
  } catch (error) {
    return failed(error, streams.err);
  }
}

if (isMainModule(import.meta.url)) process.exitCode = await runApiKey(process.argv.slice(2));
