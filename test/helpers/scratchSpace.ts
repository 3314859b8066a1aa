import { accessSync, constants, existsSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
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

/** The folder test scratch files go in: memory-backed when it can be. */
export const scratchRoot: string = hasRoom(memoryBackedCandidate) ? memoryBackedCandidate : tmpdir();

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
