import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { join, resolve, sep } from 'node:path';

/** DATA_DIR, or something in it or on its path, that the service may not trust. */
export class DataDirAccessError extends Error {
  override name = 'DataDirAccessError';
}

/**
 * Links followed on one path before it is refused: Linux's own limit for a
 * path (40, then ELOOP), so nothing the kernel would open is refused, and a
 * loop of links ends.
 */
const maxLinksFollowed = 40;

const writableByGroupOrOthers = 0o022;
const stickyBit = 0o1000;

interface Walk {
  dataDir: string;
  uid: number;
  linksFollowed: number;
  /** false while the folders are not made yet: a missing component ends the walk. */
  mustExist: boolean;
}

function octal(stats: Stats): string {
  return (stats.mode & 0o7777).toString(8).padStart(4, '0');
}

function refuse(walk: Walk, path: string, why: string, fix: string): never {
  const where = path === walk.dataDir ? path : `${path}, on the path to ${walk.dataDir},`;
  throw new DataDirAccessError(`${where} ${why}: ${fix}.`);
}

function checkOwner(walk: Walk, path: string, stats: Stats, what: string): void {
  if (stats.uid === walk.uid || stats.uid === 0) return;
  refuse(
    walk,
    path,
    `is ${what} owned by uid ${stats.uid}, neither this user (uid ${walk.uid}) nor root, who could swap it for one of their own`,
    'use a data directory whose every folder and link belongs to this user or root',
  );
}

/**
 * A folder on the path (not the data directory itself): ours or root's, and
 * not writable by group or others, as OpenSSH's StrictModes checks a key
 * file's path. The one place we depart from it: a root-owned folder with
 * the sticky bit (/tmp, /dev/shm) is accepted, since the sticky bit stops
 * other users renaming or removing our entries in it. The data directory
 * itself is still owner-checked, so a folder another user made there first
 * is refused; OpenSSH's rule would refuse every data directory under /tmp.
 */
function checkParent(walk: Walk, path: string, stats: Stats): void {
  checkOwner(walk, path, stats, 'a folder');
  if ((stats.mode & writableByGroupOrOthers) === 0) return;
  if (stats.uid === 0 && (stats.mode & stickyBit) !== 0 && stats.isDirectory()) return;
  refuse(
    walk,
    path,
    `is writable by other users (owner uid ${stats.uid}, mode ${octal(stats)}), who could swap what it holds`,
    `remove those write bits (chmod go-w ${path}) or use a data directory elsewhere`,
  );
}

/** The data directory itself: this user's (root's is not enough), and not writable by anyone else. */
function checkDataDir(walk: Walk, path: string, stats: Stats): void {
  if (stats.uid !== walk.uid) {
    refuse(
      walk,
      path,
      `belongs to uid ${stats.uid}, not to the user running the service (uid ${walk.uid}): another user ` +
        `could read or change the embedded database`,
      `run the service as its owner, or give it the whole folder (chown -R ${walk.uid} ${path}) once you trust ` +
        `what is in it, or use a data directory elsewhere`,
    );
  }
  if ((stats.mode & writableByGroupOrOthers) === 0) return;
  refuse(
    walk,
    path,
    `is writable by other users (mode ${octal(stats)}), who could have swapped what it holds`,
    `check what is in it, then chmod 700 ${path}`,
  );
}

function lstatUnlessMissing(walk: Walk, path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if (!walk.mustExist && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Walks path from / down, with lstat on each component, checking each as
 * above; a link is followed only if it is ours or root's, and where it
 * points is walked the same way from /. Returns the path with every link
 * resolved, or undefined where a component does not exist yet.
 */
function walkPath(walk: Walk, path: string, last: 'dataDir' | 'parent'): string | undefined {
  const names = resolve(path)
    .split(sep)
    .filter((name) => name !== '');
  let current: string = sep;
  const root = lstatUnlessMissing(walk, current);
  if (root) checkParent(walk, current, root);
  for (const [index, name] of names.entries()) {
    const isLast = index === names.length - 1;
    const next = join(current, name);
    const stats = lstatUnlessMissing(walk, next);
    if (!stats) return undefined;
    if (stats.isSymbolicLink()) {
      checkOwner(walk, next, stats, 'a symbolic link');
      walk.linksFollowed += 1;
      if (walk.linksFollowed > maxLinksFollowed) {
        refuse(walk, next, `is reached through more than ${maxLinksFollowed} symbolic links`, 'point it nearer');
      }
      const target = walkPath(walk, resolve(current, readlinkSync(next)), isLast ? last : 'parent');
      if (target === undefined) return undefined;
      current = target;
    } else {
      if (isLast && last === 'dataDir') checkDataDir(walk, next, stats);
      else checkParent(walk, next, stats);
      current = next;
    }
  }
  return current;
}

/**
 * Refuses a data directory another user could have made or could swap:
 * every folder from / down and every link on the way is checked (see
 * checkParent). With mustExist false, as before the folders are made, the
 * walk ends at the first missing one: what we make there is ours.
 */
export function assertTrustedPath(dataDir: string, uid: number, mustExist: boolean): void {
  walkPath({ dataDir, uid, linksFollowed: 0, mustExist }, dataDir, 'dataDir');
}
