import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../repoRoot.js';

/**
 * contract/releases.json: each release of the contract and the service, the
 * git commit it is, and the day it was cut, oldest first. Written by
 * `npm run contract -- release`; read by `npm run check:migrations` and the
 * upgrade drill, for which "the previous release" is its last entry.
 */

export interface Release {
  /** MAJOR.MINOR.PATCH: openapi.yaml's info.version and package.json's version at the release. */
  version: string;
  /** The full git commit that is the release. */
  commit: string;
  /** YYYY-MM-DD (UTC) on which it was cut. */
  date: string;
}

export const releasesFile = (root = repoRoot) => join(root, 'contract', 'releases.json');

function isRelease(value: unknown): value is Release {
  const entry = value as Partial<Release> | null;
  return (
    typeof entry === 'object' &&
    entry !== null &&
    typeof entry.version === 'string' &&
    /^\d+\.\d+\.\d+$/.test(entry.version) &&
    typeof entry.commit === 'string' &&
    /^[0-9a-f]{40}$/.test(entry.commit) &&
    typeof entry.date === 'string' &&
    /^\d{4}-\d{2}-\d{2}$/.test(entry.date)
  );
}

/** Every recorded release, oldest first; none when the file does not exist yet. */
export function readReleases(root = repoRoot): Release[] {
  const file = releasesFile(root);
  if (!existsSync(file)) return [];
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(parsed) || !parsed.every(isRelease))
    throw new Error(`${file} must be a JSON array of {version, commit (40 hex digits), date (YYYY-MM-DD)}`);
  return parsed;
}

/** The last release recorded, or undefined before the first. */
export function previousRelease(root = repoRoot): Release | undefined {
  return readReleases(root).at(-1);
}

export function appendRelease(release: Release, root = repoRoot): void {
  const releases = [...readReleases(root), release];
  writeFileSync(releasesFile(root), `${JSON.stringify(releases, null, 2)}\n`);
}

/** git in `root`; throws with git's own words when it fails. */
export function git(args: string[], root = repoRoot): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The full commit a revision names, or an error that says how to get it into a shallow clone. */
export function resolveCommit(revision: string, root = repoRoot): string {
  try {
    return git(['rev-parse', '--verify', '--quiet', `${revision}^{commit}`], root);
  } catch {
    throw new Error(
      `git does not know ${revision} in ${root}: a shallow clone lacks older commits (git fetch --unshallow)`,
    );
  }
}
