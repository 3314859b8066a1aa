/**
 * tsx scripts/contract/version.ts (a step of npm run contract -- gate)
 *
 * A changed contract gets a version of its own and a CHANGELOG.md section:
 * refuses an openapi.yaml that differs from the highest release under
 * contract/released/ while its info.version is still that release's, a
 * version below it, a step from that release smaller than the changes need
 * (the review's version line: the larger of the wire's step and the
 * TypeScript client source's, versionStep.ts), and an unreleased version
 * without its "## <version>" section in CHANGELOG.md, without a summary
 * written by hand, or whose generated entries lack a change the diff has.
 * Like breaking, it refuses (exit 2) an openapi.yaml using a construct
 * docs/constructs.md refuses (lib/contract/readable.ts).
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
import { diff } from '../../lib/contract/diff.js';
import { readableHead } from '../../lib/contract/readable.js';
import { compareVersions, lastReleased } from '../../lib/contract/released.js';
import { versionOf } from '../../lib/contract/verdict.js';
import { clientsOf, compareClients } from './clientDeclarations.js';
import { dayOf, parseOptions, processOutput, runCommand } from './commandLine.js';
import { versionStep } from './versionStep.js';

type Contract = { document: JsonObject; text: string };

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

/**
 * What is wrong with the step info.version takes from the release, against the step the changes need on the wire
 * and in the client's source on `today` (the day sunsets are judged against); empty when it is enough or not raised.
 */
export async function stepProblems(spec: Contract, released: Contract, today: string): Promise<string[]> {
  const [to, from] = [versionOf(spec.document), versionOf(released.document)];
  if (compareVersions(to, from) <= 0) return [];
  const changes = diff(released.document, spec.document, { today });
  const [before, after] = await clientsOf([released, spec]);
  const client = compareClients(before!, after!);
  const step = versionStep(from, to, changes, client);
  if (step.enough) return [];
  const gone = client.removed.map(({ name }) => name);
  return [
    `info.version ${from} -> ${to} is a ${step.made} step, but the changes need a ${step.needed} one: the wire a ` +
      `${step.wire}, the client's source a ${step.source}${gone.length > 0 ? ` (gone from the client: ${gone.join(', ')})` : ''}. ` +
      'Raise info.version, or keep what the client loses (docs/contract.md, "The version step"); npm run contract -- review says why',
  ];
}

const contractAt = (file: string): Contract => {
  const text = readFileSync(file, 'utf8');
  return { document: readContractFile(file), text };
};

/** openapi.yaml, refused (ContractInputError, exit 2) when it uses a construct docs/constructs.md refuses. */
function readableSpec(): Contract {
  const spec = contractAt(join(repoRoot, 'openapi.yaml'));
  return { ...spec, document: readableHead({ document: spec.document, source: 'openapi.yaml' }).document };
}

async function main(spec: Contract): Promise<number> {
  const base = lastReleased();
  const released = contractAt(base);
  const problems = [
    ...versionProblems(spec.document, released.document, readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8')),
    ...(await stepProblems(spec, released, dayOf(undefined))),
  ];
  for (const problem of problems) console.error(`  x ${problem}`);
  if (problems.length === 0)
    console.log(`info.version, its step and CHANGELOG.md agree with ${relative(repoRoot, base)}`);
  return problems.length === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  let spec: Contract | undefined;
  const status = runCommand('version', 'tsx scripts/contract/version.ts (no options)', processOutput(''), () => {
    parseOptions(process.argv.slice(2), {});
    spec = readableSpec();
    return 0;
  });
  if (spec === undefined) process.exitCode = status;
  else void main(spec).then((code) => (process.exitCode = code));
}
