/**
 * tsx scripts/contract/version.ts (a step of npm run contract -- gate)
 *
 * A changed contract gets a version of its own and a CHANGELOG.md section:
 * refuses an openapi.yaml that differs from the highest release under
 * contract/released/ while its info.version is still that release's, a
 * version below it, and an unreleased version without its "## <version>"
 * section in CHANGELOG.md, without a summary written by hand, or whose
 * generated entries lack a change the diff has. Like breaking, it refuses (exit 2) an openapi.yaml using a
 * construct docs/constructs.md refuses (lib/contract/readable.ts).
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { same, type JsonObject } from '../../lib/openapi/dereference.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { changesBlock, sectionOf, summaryPlaceholder } from '../../lib/contract/changelogSection.js';
import { blockContent } from '../../lib/generatedBlocks.js';
import { changes } from '../../lib/contract/changelog.js';
import { readContractFile } from '../../lib/contract/load.js';
import { readableHead } from '../../lib/contract/readable.js';
import { compareVersions, lastReleased } from '../../lib/contract/released.js';
import { parseOptions, processOutput, runCommand } from './commandLine.js';

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
  const section = sectionOf(changelog, version);
  if (section === undefined)
    return [`CHANGELOG.md has no "## ${version}" section: npm run generate writes it; then write its summary on top`];
  const problems: string[] = [];
  const summary = section.slice(section.indexOf('\n'), section.indexOf('<!-- BEGIN generated:')).trim();
  if (summary === '' || summary === summaryPlaceholder)
    problems.push(`CHANGELOG.md's "## ${version}" section has no summary: write what changed for consumers, and why`);
  const entries = blockContent(section, changesBlock(version));
  if (entries?.trim() !== changes(released, spec).trim())
    problems.push(
      `CHANGELOG.md's "## ${version}" entries are not what changed since ${releasedVersion}: run npm run generate`,
    );
  return problems;
}

function main(): number {
  const base = lastReleased();
  const problems = versionProblems(
    readableHead({ document: readContractFile(join(repoRoot, 'openapi.yaml')), source: 'openapi.yaml' }).document,
    readContractFile(base),
    readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8'),
  );
  for (const problem of problems) console.error(`  x ${problem}`);
  if (problems.length === 0) console.log(`info.version and CHANGELOG.md agree with ${relative(repoRoot, base)}`);
  return problems.length === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  process.exitCode = runCommand('version', 'tsx scripts/contract/version.ts (no options)', processOutput(''), () => {
    parseOptions(process.argv.slice(2), {});
    return main();
  });
