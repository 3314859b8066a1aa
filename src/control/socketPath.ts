import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { readServerSecret, removeServerSecret, writeServerSecret } from './serverProof.js';

/**
 * The longest path a Unix socket can be bound at: sun_path holds 108 bytes
 * on Linux and 104 on macOS, the terminating NUL included; the shorter.
 */
const maxSocketPathBytes = 103;

const controlFolderName = 'control';
const socketName = 'apikey.sock';
/** In DATA_DIR/control when the socket lives elsewhere: the socket's path. */
const recordName = 'socket-path';

export interface ControlSocketPlace {
  /** The folder only the owner may enter (0700), holding the socket. */
  folder: string;
  socket: string;
  /** DATA_DIR/control, where the CLI finds the socket or the record of where it is. */
  home: string;
}

export class ControlFolderError extends Error {
  override name = 'ControlFolderError';
}

/**
 * Where the server's control socket goes: DATA_DIR/control/apikey.sock, or,
 * when that path is too long for a socket, a folder named by a hash of
 * DATA_DIR under runtimeDir ($XDG_RUNTIME_DIR, else the temporary folder),
 * recorded in DATA_DIR/control/socket-path.
 */
export function controlSocketPlace(dataDir: string, runtimeDir: string): ControlSocketPlace {
  const home = join(resolve(dataDir), controlFolderName);
  const inHome = join(home, socketName);
  if (Buffer.byteLength(inHome) <= maxSocketPathBytes) return { folder: home, socket: inHome, home };
  const hash = createHash('sha256').update(home).digest('hex').slice(0, 16);
  const folder = join(resolve(runtimeDir), `pet-store-${hash}`);
  return { folder, socket: join(folder, socketName), home };
}

/**
 * Makes folder (0700) or checks the one there: a directory, not a link,
 * owned by this user, then closed to everyone else. In a shared temporary
 * folder another user could have made it first to receive the commands.
 */
export function ownedFolder(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const stat = lstatSync(folder);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid))
    throw new ControlFolderError(`${folder} is not a directory owned by this user`);
  chmodSync(folder, 0o700);
}

/**
 * Prepares the place's folders, removes a socket left by a server that died,
 * records a socket kept elsewhere, and writes the secret this server proves
 * itself with (serverProof.ts), which it returns. The last start's record
 * and secret go first, before anything here can fail: a record left behind
 * would point the CLI at a path another user may now hold.
 */
export function prepareControlSocket(place: ControlSocketPlace): Buffer {
  ownedFolder(place.home);
  const record = join(place.home, recordName);
  rmSync(record, { force: true });
  removeServerSecret(place.home);
  ownedFolder(place.folder);
  // The caller holds DATA_DIR's lock: a socket there belongs to a server that is gone.
  rmSync(place.socket, { force: true });
  if (place.folder !== place.home) writeFileSync(record, `${place.socket}\n`, { mode: 0o600, flag: 'wx' });
  return writeServerSecret(place.home);
}

/**
 * Takes back the secret and the record of a socket that could not be
 * opened, touching nothing outside DATA_DIR (the folder elsewhere may not
 * be ours). Never throws: it runs on the way out of a failure.
 */
export function withdrawControlSocket(place: ControlSocketPlace): void {
  try {
    removeServerSecret(place.home);
    rmSync(join(place.home, recordName), { force: true });
  } catch {
    // Nothing to take back, or DATA_DIR/control is not there.
  }
}

/** Removes the socket and the secret (and the folder made for the socket elsewhere, with its record). */
export function removeControlSocket(place: ControlSocketPlace): void {
  removeServerSecret(place.home);
  rmSync(place.socket, { force: true });
  if (place.folder !== place.home) {
    rmSync(join(place.home, recordName), { force: true });
    rmSync(place.folder, { recursive: true, force: true });
  }
}

/** A control socket the CLI may send a command to, and the secret its server must prove it knows. */
export interface TrustedControlSocket {
  path: string;
  secret: Buffer;
}

/** Why the CLI will not use a control socket: the message says what is wrong and what to do. */
export class UntrustedControlSocketError extends Error {
  override name = 'UntrustedControlSocketError';
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Why path may not be trusted, as OpenSSH judges its files: it must be of
 * the kind expected (never a link), belong to this user, and, for a folder,
 * be writable by nobody else (who could swap what is inside).
 */
function distrust(path: string, stats: Stats, kind: 'socket' | 'folder'): string | undefined {
  const uid = process.getuid?.();
  const isKind = kind === 'socket' ? stats.isSocket() : stats.isDirectory();
  if (!isKind) return `${path} is not a ${kind}${stats.isSymbolicLink() ? ' (a symbolic link)' : ''}`;
  if (uid !== undefined && stats.uid !== uid)
    return `${path} belongs to uid ${stats.uid}, not to this user (uid ${uid})`;
  if (kind === 'folder' && (stats.mode & 0o022) !== 0)
    return `${path} can be written by other users (mode ${(stats.mode & 0o777).toString(8)})`;
  return undefined;
}

function assertTrusted(path: string, kind: 'socket' | 'folder'): void {
  const stats = lstatOrUndefined(path);
  const problem = stats && distrust(path, stats, kind);
  if (problem === undefined) return;
  throw new UntrustedControlSocketError(
    `Refusing the control socket: ${problem}. Another user may be listening in the server's place; ` +
      'nothing was sent. Stop the server and start it again (it makes the socket anew), then run this again.',
  );
}

/**
 * The socket a running server listens on for DATA_DIR, as the server
 * recorded it, with the secret it must prove; undefined when there is none
 * (no server, or one still starting). Throws UntrustedControlSocketError
 * when the socket, its folder or DATA_DIR/control is not this user's alone.
 */
export function findControlSocket(dataDir: string): TrustedControlSocket | undefined {
  const home = join(resolve(dataDir), controlFolderName);
  if (lstatOrUndefined(home) === undefined) return undefined;
  assertTrusted(home, 'folder');
  let socket = join(home, socketName);
  try {
    socket = readFileSync(join(home, recordName), 'utf8').trim();
  } catch {
    // No record: the socket is in DATA_DIR/control.
  }
  const secret = readServerSecret(home);
  if (secret === undefined || lstatOrUndefined(socket) === undefined) return undefined;
  assertTrusted(dirname(socket), 'folder');
  assertTrusted(socket, 'socket');
  return { path: socket, secret };
}
