import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
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
/** The start of the name of a socket's folder elsewhere; mkdtemp adds six random characters. */
const folderPrefix = 'pet-store-';

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

/** DATA_DIR/control: the socket when its path is short enough, else the record of where it is; the secret. */
export function controlHome(dataDir: string): string {
  return join(resolve(dataDir), controlFolderName);
}

/**
 * Makes folder (0700) or checks the one there: a directory, not a link,
 * owned by this user, then closed to everyone else.
 */
export function ownedFolder(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  assertOwnedFolder(folder);
}

function assertOwnedFolder(folder: string): void {
  const stat = lstatSync(folder);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid))
    throw new ControlFolderError(`${folder} is not a directory owned by this user`);
  chmodSync(folder, 0o700);
}

/**
 * A folder for the socket under runtimeDir with a name nobody can choose
 * first: mkdtemp makes it (0700) under a random name and fails rather than
 * take one that exists, so another user of a shared temporary folder can
 * neither pre-empt it nor make the server go without a socket.
 */
function folderElsewhere(runtimeDir: string): string {
  const folder = mkdtempSync(join(resolve(runtimeDir), folderPrefix));
  assertOwnedFolder(folder);
  return folder;
}

/**
 * The folder the last start recorded, if it is still there and this
 * user's: a server that died could not remove it. Its name was random and
 * the record is in the owner-only DATA_DIR/control, but the folder is
 * checked before it goes, as anything in a shared folder is.
 */
function removeRecordedFolder(record: string): void {
  let recorded: string;
  try {
    recorded = dirname(readFileSync(record, 'utf8').trim());
  } catch {
    return;
  }
  const stats = lstatOrUndefined(recorded);
  const uid = process.getuid?.();
  if (!basename(recorded).startsWith(folderPrefix) || !stats?.isDirectory()) return;
  if (uid === undefined || stats.uid === uid) rmSync(recorded, { recursive: true, force: true });
}

/**
 * Prepares the socket's place: DATA_DIR/control/apikey.sock, or, when that
 * path is too long for a socket, a folder made by mkdtemp under runtimeDir
 * ($XDG_RUNTIME_DIR, else the temporary folder), recorded in
 * DATA_DIR/control/socket-path. Removes a socket or folder left by a server
 * that died, and writes the secret this server proves itself with
 * (serverProof.ts). The last start's record and secret go first, before
 * anything here can fail: a record left behind would point the CLI at a
 * path another user may now hold.
 */
export function prepareControlSocket(
  dataDir: string,
  runtimeDir: string,
): { place: ControlSocketPlace; secret: Buffer } {
  const home = controlHome(dataDir);
  ownedFolder(home);
  const record = join(home, recordName);
  removeRecordedFolder(record);
  rmSync(record, { force: true });
  removeServerSecret(home);
  const inHome = join(home, socketName);
  let place: ControlSocketPlace = { folder: home, socket: inHome, home };
  if (Buffer.byteLength(inHome) > maxSocketPathBytes) {
    const folder = folderElsewhere(runtimeDir);
    place = { folder, socket: join(folder, socketName), home };
    writeFileSync(record, `${place.socket}\n`, { mode: 0o600, flag: 'wx' });
  } else {
    // The caller holds DATA_DIR's lock: a socket there belongs to a server that is gone.
    rmSync(inHome, { force: true });
  }
  return { place, secret: writeServerSecret(home) };
}

/**
 * Takes back the secret and the record of a socket that could not be
 * opened, with the folder made for it elsewhere. Never throws: it runs on
 * the way out of a failure.
 */
export function withdrawControlSocket(dataDir: string): void {
  try {
    const home = controlHome(dataDir);
    removeServerSecret(home);
    const record = join(home, recordName);
    removeRecordedFolder(record);
    rmSync(record, { force: true });
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
  const home = controlHome(dataDir);
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
