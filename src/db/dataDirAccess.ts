import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { assertTrustedPath, DataDirAccessError } from './dataDirPath.js';

/** Every permission bit of the group and of others. */
const groupAndOthers = 0o077;

function ownerOnly(stats: Stats): number {
  return stats.isDirectory() ? 0o700 : stats.mode & 0o700;
}

function refuseForeign(path: string, stats: Stats, uid: number, dataDir: string): void {
  if (stats.uid === uid) return;
  throw new DataDirAccessError(
    `${path} belongs to uid ${stats.uid}, not to the user running the service (uid ${uid}): another user ` +
      `could read or change the embedded database. Run the service as its owner, or give it the whole ` +
      `folder (chown -R ${uid} ${dataDir}) once you trust what is in it, or use a data directory elsewhere.`,
  );
}

/** Tightens path (not following links) to owner-only; counts what it changed. */
function tighten(path: string, stats: Stats): number {
  if (stats.isSymbolicLink() || (stats.mode & groupAndOthers) === 0) return 0;
  chmodSync(path, ownerOnly(stats));
  return 1;
}

function tightenTree(folder: string, uid: number, dataDir: string): number {
  let changed = 0;
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    const stats = lstatSync(path);
    refuseForeign(path, stats, uid, dataDir);
    changed += tighten(path, stats);
    if (stats.isDirectory()) changed += tightenTree(path, uid, dataDir);
  }
  return changed;
}

/**
 * Makes DATA_DIR owner-only (0700, and everything in it: folders 0700, files
 * 0600), as PostgreSQL insists on for its own data directory: the WAL holds
 * every key's hash, and a byte changed in global/pg_control stops the next
 * start. A folder or file owned by another user is refused, with the fix:
 * that user could have changed it, and we could not tighten it anyway. One
 * of ours that others could reach is tightened rather than refused: the
 * files are this user's, so closing them loses nothing, and every data
 * directory made before the service set modes (files 0666 under umask 022)
 * starts again without a manual chmod. Returns how many modes it changed.
 * Its path is checked first (dataDirPath.ts): every folder from / down and
 * every link on the way must be ours or root's, and closed to others.
 * Where the platform has no uids (Windows), it only creates the folder.
 */
export function secureDataDir(dataDir: string): number {
  const uid = process.getuid?.();
  // Checked before mkdir makes anything through the path, and again once all of it exists.
  if (uid !== undefined) assertTrustedPath(dataDir, uid, false);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (uid === undefined) return 0;
  assertTrustedPath(dataDir, uid, true);
  // It may be a link the operator made (to another disk), checked above: judge what it points at.
  const stats = statSync(dataDir);
  return tighten(dataDir, stats) + tightenTree(dataDir, uid, dataDir);
}
