import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

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

/** Prepares the place's folders, removes a socket left by a server that died, records a socket kept elsewhere. */
export function prepareControlSocket(place: ControlSocketPlace): void {
  ownedFolder(place.home);
  ownedFolder(place.folder);
  // The caller holds DATA_DIR's lock: a socket there belongs to a server that is gone.
  rmSync(place.socket, { force: true });
  const record = join(place.home, recordName);
  if (place.folder === place.home) rmSync(record, { force: true });
  else writeFileSync(record, `${place.socket}\n`, { mode: 0o600 });
}

/** Removes the socket (and the folder made for it elsewhere, with its record). */
export function removeControlSocket(place: ControlSocketPlace): void {
  rmSync(place.socket, { force: true });
  if (place.folder !== place.home) {
    rmSync(join(place.home, recordName), { force: true });
    rmSync(place.folder, { recursive: true, force: true });
  }
}

/** The socket a running server listens on for DATA_DIR, as the server recorded it; undefined when there is none. */
export function findControlSocket(dataDir: string): string | undefined {
  const home = join(resolve(dataDir), controlFolderName);
  let socket = join(home, socketName);
  try {
    socket = readFileSync(join(home, recordName), 'utf8').trim();
  } catch {
    // No record: the socket is in DATA_DIR/control.
  }
  try {
    return lstatSync(socket).isSocket() ? socket : undefined;
  } catch {
    return undefined;
  }
}
