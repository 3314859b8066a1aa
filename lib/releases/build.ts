import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../repoRoot.js';
import type { Release } from './record.js';

/**
 * A release's own tree, built as its commit says (`npm ci`, `npm run build`),
 * for the checks that run the previous release against a newer schema. Built
 * once per commit under the cache folder (.run/releases/ by default) and moved
 * into place only when complete, so an interrupted build is never reused.
 */

export interface ReleaseBuild {
  release: Release;
  /** The release's checkout: dist/, node_modules/, its migrations/ and scripts/. */
  root: string;
  /** dist/server.js of the release. */
  server: string;
  /** dist/cli/migrate.js of the release. */
  migrate: string;
}

export const defaultCacheFolder = join(repoRoot, '.run', 'releases');

function run(command: string, args: string[], cwd: string, what: string): void {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout: 15 * 60_000,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
  });
  if (result.status !== 0)
    throw new Error(
      `${what} failed (${command} ${args.join(' ')} in ${cwd}, exit ${result.status ?? result.signal}):\n` +
        `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-30).join('\n'),
    );
}

/**
 * The release's tree, built; `source` is a repository that has its commit.
 * `log` hears what takes time (an uncached build is a minute or more).
 */
export function buildRelease(
  release: Release,
  options: { source?: string; cacheFolder?: string; log?: (line: string) => void } = {},
): ReleaseBuild {
  const cache = options.cacheFolder ?? defaultCacheFolder;
  const root = join(cache, release.commit);
  const build: ReleaseBuild = {
    release,
    root,
    server: join(root, 'dist', 'server.js'),
    migrate: join(root, 'dist', 'cli', 'migrate.js'),
  };
  if (existsSync(join(root, '.built'))) return build;
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, `.building-${release.commit.slice(0, 12)}-`));
  try {
    options.log?.(
      `building release ${release.version} (${release.commit.slice(0, 12)}) in ${root}: npm ci, npm run build`,
    );
    const archive = join(work, 'release.tar');
    run(
      'git',
      ['archive', '--format=tar', `--output=${archive}`, release.commit],
      options.source ?? repoRoot,
      'git archive',
    );
    const tree = join(work, 'tree');
    mkdirSync(tree);
    run('tar', ['-xf', archive, '-C', tree], work, 'unpacking the release');
    run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], tree, `npm ci of release ${release.version}`);
    run('npm', ['run', 'build', '--silent'], tree, `npm run build of release ${release.version}`);
    writeFileSync(join(tree, '.built'), `${JSON.stringify(release)}\n`);
    // Suites that run at once (CI's lanes) may build the same release together: the first one done keeps its
    // tree, which the other may already run from; the later one drops its own.
    if (existsSync(join(root, '.built'))) return build;
    rmSync(root, { recursive: true, force: true });
    try {
      renameSync(tree, root);
    } catch (error) {
      if (!existsSync(join(root, '.built'))) throw error;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return build;
}
