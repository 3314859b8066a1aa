/**
 * tsx scripts/contract/version.ts (a step of npm run contract -- gate)
 *
 * A changed contract gets a version of its own and a CHANGELOG.md section:
 * refuses an openapi.yaml that differs from the highest release under
 * contract/released/ while its info.version is still that release's, a
 * version below it, and an unreleased version without its "## <version>"
 * section in CHANGELOG.md.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { same, type JsonObject } from '../../lib/openapi/dereference.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { compareVersions, lastReleased } from './released.js';

const versionOf = (document: JsonObject) => String((document['info'] as JsonObject | undefined)?.['version']);

/** What is wrong with the spec's version against the last release and the changelog; empty when nothing. */
export function versionProblems(spec: JsonObject, released: JsonObject, changelog: string): string[] {
  const version = versionOf(spec);
  const releasedVersion = versionOf(released);
  const order = compareVersions(version, releasedVersion);
  if (order < 0) return [`info.version ${version} is below the last release ${releasedVersion}`];
  if (order === 0)
    return same(spec, released)
      ? []
      : [
          `openapi.yaml differs from the released ${releasedVersion} but info.version is still ${releasedVersion}: ` +
            'raise it (minor for an additive change) and add its CHANGELOG.md section',
        ];
  const heading = new RegExp(`^## ${version.replace(/\./g, '\\.')}\\b`, 'm');
  return heading.test(changelog)
    ? []
    : [`CHANGELOG.md has no "## ${version}" section; paste npm run contract -- changelog under it, a summary on top`];
}

function main(): number {
  const base = lastReleased();
  const load = (file: string) => parse(readFileSync(file, 'utf8')) as JsonObject;
  const problems = versionProblems(
    load(join(repoRoot, 'openapi.yaml')),
    load(base),
    readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8'),
  );
  for (const problem of problems) console.error(`  x ${problem}`);
  if (problems.length === 0) console.log(`info.version and CHANGELOG.md agree with ${relative(repoRoot, base)}`);
  return problems.length === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main();
