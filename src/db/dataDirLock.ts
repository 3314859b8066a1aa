import { closeSync, constants, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { lock } from 'os-lock';

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

export interface DataDirLock {
  release(): void;
}

/**
 * The lock files this process holds. An fcntl lock belongs to the process,
 * so the kernel would grant this process a second one on the same file;
 * and closing any descriptor of the file drops it, so the holder never
 * opens the file again.
 */
const heldHere = new Set<string>();

/** The errors fcntl(F_SETLK) gives when another process holds a conflicting lock. */
const heldElsewhere = new Set(['EACCES', 'EAGAIN', 'EBUSY']);

/** The pid the holder wrote, for the message; a hint only (it is the holder's own view, e.g. 1 in a container). */
function recordedOwner(lockPath: string): string {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? `process ${pid}` : 'another process';
  } catch {
    return 'another process';
  }
}

/**
 * Two processes opening one embedded data directory corrupt it silently, so
 * each holds an exclusive advisory lock (fcntl, through os-lock) on
 * DATA_DIR/pets.lock while the database is open. The kernel releases it
 * when the holder exits, however it dies (kill -9, out of memory), so a
 * crashed process never blocks the next start, whatever pid either has:
 * in a container node is PID 1 on every start, and a recorded pid can
 * belong to an unrelated process later. The file stays (removing it would
 * let a process that opened it just before lock an orphaned copy); the pid
 * inside only names the holder in the message.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lockPath = join(dataDir, 'pets.lock');
  if (heldHere.has(lockPath)) {
    throw new DataDirLockedError(`The embedded database in ${dataDir} is already open in this process.`);
  }
  heldHere.add(lockPath);
  let fd: number | undefined;
  try {
    fd = openSync(lockPath, constants.O_RDWR | constants.O_CREAT, 0o600);
    await lock(fd, { exclusive: true, immediate: true });
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`, 0);
  } catch (error) {
    heldHere.delete(lockPath);
    if (fd !== undefined) closeSync(fd);
    if (heldElsewhere.has((error as NodeJS.ErrnoException).code ?? '')) {
      throw new DataDirLockedError(
        `The embedded database in ${dataDir} is in use by ${recordedOwner(lockPath)} (is \`npm start\` running?). ` +
          'Stop that process first, or point DATABASE_URL at a PostgreSQL server.',
      );
    }
    throw error;
  }
  const held = fd;
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // Closing the descriptor releases the lock.
      closeSync(held);
      heldHere.delete(lockPath);
    },
  };
}
