/**
 * npm run check:migrations [-- --cache DIR] [--always]
 *
 * The database's gate (a step of npm run contract -- gate, so of CI): every
 * migration added since the previous release (the last entry of
 * contract/releases.json) must
 *   1. take no long lock: squawk lints it with the rules of .squawk.toml
 *      (a reviewed exception is a `-- squawk-ignore <rule>` comment in it);
 *   2. keep the previous release working: that release, built from its
 *      commit (cached under --cache, .run/releases/ by default), serves a
 *      database migrated to this tree's schema and passes its own
 *      `npm run verify` (write mode) over HTTP.
 * A released migration edited or removed fails too. Exit code 0 only when
 * nothing failed; docs/deploying.md says how to write a migration that passes.
 */
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { buildRelease } from '../../lib/releases/build.js';
import { previousRelease, resolveCommit } from '../../lib/releases/record.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { isMainModule } from '../../src/entryPoint.js';
import { migrationChanges } from './changes.js';
import { lintMigrations } from './lint.js';
import { runPreviousRelease } from './previousRelease.js';

const docs = 'docs/deploying.md ("Changing the schema")';

export async function checkMigrations(
  options: { cacheFolder?: string; always?: boolean },
  out: (line: string) => void,
): Promise<number> {
  const release = previousRelease();
  if (!release) {
    out('no release recorded in contract/releases.json: nothing to compare the migrations with');
    return 0;
  }
  const commit = resolveCommit(release.commit);
  const changes = migrationChanges(commit);
  const problems = [...changes.problems];
  const since = `the previous release ${release.version} (${commit.slice(0, 12)}, ${release.date})`;
  out(
    changes.added.length > 0
      ? `migrations added since ${since}: ${changes.added.join(', ')}`
      : `no migration added since ${since}`,
  );

  if (changes.added.length > 0) {
    out('== lock safety (squawk, .squawk.toml)');
    const findings = lintMigrations(changes.added.map((file) => join(repoRoot, 'migrations', file)));
    for (const finding of findings)
      problems.push(
        `${relative(repoRoot, finding.file)}:${finding.line} squawk rule ${finding.rule}: ${finding.message}`,
      );
    out(findings.length === 0 ? 'squawk: no lock hazard found' : `squawk: ${findings.length} problem(s)`);
  }

  if (changes.added.length > 0 || options.always) {
    out(`== release ${release.version} on this tree's schema`);
    const build = buildRelease(release, {
      ...(options.cacheFolder ? { cacheFolder: options.cacheFolder } : {}),
      log: out,
    });
    const result = await runPreviousRelease(build, out);
    out(`release ${release.version}'s verify: ${result.summary}`);
    for (const failure of result.failures)
      problems.push(`release ${release.version}'s own check fails on the new schema: ${failure}`);
  }

  if (problems.length === 0) {
    out('check:migrations passed');
    return 0;
  }
  out('');
  for (const problem of problems) out(`  x ${problem}`);
  out(`check:migrations failed: ${problems.length} problem(s); how to write a migration that passes: ${docs}`);
  return 1;
}

if (isMainModule(import.meta.url)) {
  const { values } = parseArgs({ options: { cache: { type: 'string' }, always: { type: 'boolean', default: false } } });
  try {
    process.exitCode = await checkMigrations(
      { ...(values.cache ? { cacheFolder: values.cache } : {}), always: values.always },
      (line) => process.stdout.write(`${line}\n`),
    );
  } catch (error) {
    process.stderr.write(`check:migrations could not run: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
