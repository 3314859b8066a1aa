import { statfsSync } from 'node:fs';
import { DatabaseUnavailableError } from './unavailability.js';

const megabyte = 1024 * 1024;
// How long one reading of the free space is trusted: a full disk is seen
// within this, at one statfs call per interval whatever the traffic.
const recheckMs = 200;

export class DiskFullError extends Error {
  override name = 'DiskFullError';
}

/** Free space (bytes) available to this process in the file system of folder. */
export function freeBytes(folder: string): number {
  const stats = statfsSync(folder);
  return stats.bavail * stats.bsize;
}

function describe(folder: string, free: number, minFreeMb: number): string {
  const freeMb = (free / megabyte).toFixed(1);
  return (
    `the disk of ${folder} is full: ${freeMb} MB free, the embedded database needs at least ${minFreeMb} MB ` +
    '(a new WAL segment takes 16 MB)'
  );
}

/** Throws a DiskFullError, in one line an operator can act on, when folder has too little free space. */
export function assertFreeSpace(folder: string, minFreeMb: number): void {
  const free = freeBytes(folder);
  if (free < minFreeMb * megabyte) {
    throw new DiskFullError(
      `The embedded database cannot start: ${describe(folder, free, minFreeMb)}. Free space, then start again.`,
    );
  }
}

export interface DiskGuard {
  /** Throws DatabaseUnavailableError while the free space is below the minimum. */
  check(): void;
  /** Whether the disk was full at the last reading. */
  readonly full: boolean;
}

/**
 * PGlite (PostgreSQL in WebAssembly) does not survive ENOSPC: after a failed
 * WAL write it spins in its event loop and ignores signals. So the service
 * refuses work before the disk is that full: every call below the minimum
 * free space is a DatabaseUnavailableError (503), and a call resumes once
 * space is back.
 */
export function createDiskGuard(folder: string, minFreeMb: number): DiskGuard {
  let checkedAt = 0;
  let free = Number.POSITIVE_INFINITY;
  const minimum = minFreeMb * megabyte;
  const read = (): number => {
    const now = Date.now();
    if (now - checkedAt >= recheckMs) {
      checkedAt = now;
      try {
        free = freeBytes(folder);
      } catch {
        free = Number.POSITIVE_INFINITY;
      }
    }
    return free;
  };
  return {
    check() {
      const current = read();
      if (current < minimum) {
        throw new DatabaseUnavailableError(new DiskFullError(describe(folder, current, minFreeMb)));
      }
    },
    get full() {
      return read() < minimum;
    },
  };
}

/** ENOSPC or PostgreSQL's disk_full (53100), however the error reached us. */
export function isDiskFull(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === '53100' || code === 'ENOSPC' || /No space left on device/i.test(error.message);
}
