import { accessSync, constants, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Every embedded test database is a copy of a 39 MB, 1,021-file template.
// On this project's ext4 disks a copy costs 0.7 s of kernel CPU, on tmpfs
// 0.04 s (measured with `cp -r`, 2 cores, 2026-11-25); a run makes about 85.
// Nothing a test writes needs to survive the run, so scratch files go to
// memory when the machine has a tmpfs with room, else to the OS temp dir.
const memoryBackedCandidate = '/dev/shm';

// Four test files at a time, each with a few databases of 40-60 MB: a
// container's default 64 MB /dev/shm would fill, so it must have this much.
const minFreeBytes = 1024 ** 3;

function hasRoom(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize >= minFreeBytes;
  } catch {
    return false;
  }
}

/**
 * This user's folder in a shared one (/dev/shm and /tmp are writable by every
 * user): made owner-only, and refused unless it is a real folder this user
 * owns that no one else can enter. Inside it, the templates' predictable
 * names (embeddedTemplate.ts) and their lock file cannot have been made, or
 * swapped for a symbolic link, by another user of the machine.
 */
export function privateFolderIn(shared: string): string {
  const uid = process.getuid?.() ?? 0;
  const dir = join(shared, `pets-test-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stats = lstatSync(dir);
  if (!stats.isDirectory() || stats.uid !== uid || (stats.mode & 0o077) !== 0) {
    const what = stats.isSymbolicLink()
      ? 'a symbolic link'
      : `owned by uid ${stats.uid}, mode ${(stats.mode & 0o777).toString(8)}`;
    throw new Error(`${dir} must be a folder only uid ${uid} can use, and is ${what}: remove it and run again`);
  }
  return dir;
}

/** The folder test scratch files go in: memory-backed when it can be, this user's alone. */
export const scratchRoot: string = privateFolderIn(hasRoom(memoryBackedCandidate) ? memoryBackedCandidate : tmpdir());

// Folders made by scratchDir and not removed yet. One still there when the
// process exits is memory lost until reboot, so the test file fails.
const notRemoved = new Set<string>();
process.on('exit', () => {
  const left = [...notRemoved].filter((path) => existsSync(path));
  if (left.length === 0) return;
  console.error(`# scratch folders left behind (remove() was not called): ${left.join(', ')}`);
  process.exitCode = 1;
});

/** A new folder under scratchRoot; the test must call remove() when done with it. */
export function scratchDir(prefix = 'pets-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(scratchRoot, prefix));
  notRemoved.add(path);
  return {
    path,
    remove: () => {
      // Retries: a process that has just exited (a database, Chromium) may
      // still be finishing its last writes into the folder.
      rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      notRemoved.delete(path);
    },
  };
}
