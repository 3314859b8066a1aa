import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiBasePath, newApiKey, ownedFolder, startPostgres, startService } from '../../lib/instances/index.js';
import { runChecked } from '../../lib/instances/processes.js';
import type { ReleaseBuild } from '../../lib/releases/build.js';
import { repoRoot } from '../../lib/repoRoot.js';

/**
 * The previous release on this tree's schema: a private PostgreSQL cluster,
 * migrated by the release's own `migrate` (the database as production has
 * it), then by this tree's (the new migrations, as a deploy runs them before
 * any instance is replaced); the release's server started on it; and the
 * release's own `npm run verify` in write mode against that server over HTTP.
 */

export interface CompatibilityResult {
  /** The FAIL lines of the release's verify ("FAIL createPet 500: ..."), or why it could not run. */
  failures: string[];
  /** The verify run's last line (requests sent, pets created). */
  summary: string;
}

const database = 'pets';

function migrateWith(root: string, command: string[], url: string): string {
  return runChecked(command[0]!, command.slice(1), {
    cwd: root,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', DATABASE_URL: url, LOG_LEVEL: 'warn' },
  }).trim();
}

export async function runPreviousRelease(
  build: ReleaseBuild,
  log: (line: string) => void,
): Promise<CompatibilityResult> {
  const folder = ownedFolder('pets-check-migrations-', undefined, tmpdir());
  const postgres = await startPostgres({ parent: folder });
  try {
    await postgres.query(`CREATE DATABASE ${database}`);
    const url = postgres.url(database);
    log(
      `release ${build.release.version} migrates a fresh database: ${migrateWith(build.root, [process.execPath, build.migrate], url)}`,
    );
    const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');
    log(
      `this tree migrates it further: ${migrateWith(repoRoot, [tsx, join(repoRoot, 'src', 'cli', 'migrate.ts')], url)}`,
    );

    const apiKey = newApiKey();
    const server = await startService({
      name: `release-${build.release.version}`,
      entry: build.server,
      parent: folder,
      env: { DATABASE_URL: url, BOOTSTRAP_API_KEY: apiKey, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '100000' },
    });
    try {
      const baseUrl = `${server.origin}${apiBasePath(build.root)}`;
      log(`release ${build.release.version} serves the new schema at ${baseUrl}; running its npm run verify`);
      // A fixed seed: the same requests on every run, so a failure is reproducible.
      const verify = spawnSync(
        join(build.root, 'node_modules', '.bin', 'tsx'),
        ['scripts/verify/cli.ts', '--base-url', baseUrl, '--api-key', apiKey, '--seed', '38'],
        { cwd: build.root, encoding: 'utf8', timeout: 10 * 60_000, env: { ...process.env, API_KEY: apiKey } },
      );
      const lines = verify.stdout.trim().split('\n');
      const failures = lines.filter((line) => line.startsWith('FAIL '));
      if (verify.status !== 0 && failures.length === 0)
        failures.push(`its verify exited with ${verify.status ?? verify.signal}: ${verify.stderr.trim().slice(-500)}`);
      return { failures, summary: lines.at(-1) ?? '' };
    } finally {
      await server.stop();
    }
  } finally {
    await postgres.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}
