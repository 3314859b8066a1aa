/**
 * npm run contract -- review [--base FILE|REV]... [--head FILE|REV] [--date YYYY-MM-DD] [--json]
 *
 * What a change of openapi.yaml does to consumers, as Markdown for a pull-request comment (or JSON, whose shape is
 * contract/review.schema.json): per comparison, the version step it needs, each changed operation with one
 * sentence per change and its rule id (the one diff, lib/contract/diff.ts), the first-party client's declarations
 * before and after (scripts/contract/clientDeclarations.ts), and the changelog entries it produces. The base is the
 * last release (contract/releases.json); under CI, the merge base with the target branch too, when its contract
 * differs. A base that is a release is judged whole; one that is not (unreleased main) is judged for what the head
 * adds on top, against the step info.version takes from the last release. --date (default today, UTC) is the day
 * sunsets are judged against, so a review can be run again. Exit 0 whatever the verdict (the gate judges); 2 on
 * input it cannot read or an option it does not know.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Change } from '../../lib/contract/change.js';
import { changes as changelogEntries } from '../../lib/contract/changelog.js';
import { diff } from '../../lib/contract/diff.js';
import { loadContract, readContractFile, type LoadedContract } from '../../lib/contract/load.js';
import { operationsOf } from '../../lib/contract/operations.js';
import { compareVersions, majorOf, releasedFile, releasedVersions } from '../../lib/contract/released.js';
import { describeAlternative, requirementsOf } from '../../lib/contract/securityDiff.js';
import { code, inline, literal } from '../../lib/contract/text.js';
import { bumpBetween, bumpNeeded, covers, versionOf, type Bump } from '../../lib/contract/verdict.js';
import { dereference, same, type Json, type JsonObject } from '../../lib/openapi/dereference.js';
import { previousRelease } from '../../lib/releases/record.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { clientsOf, compareClients, type ClientChanges } from './clientDeclarations.js';
import { dayOf, parseOptions, processOutput, runCommand, type Output } from './commandLine.js';

/** The shape's version (contract/review.schema.json): raised when a field changes meaning or goes away. */
export const reviewFormat = 1;

export const reviewUsage =
  'npm run contract -- review [--base FILE|REV]... [--head FILE|REV] [--date YYYY-MM-DD] [--json]';

interface Fact {
  before: string;
  after: string;
}

export interface OperationReview {
  operationId: string;
  method: string;
  path: string;
  changes: Change[];
  /** Present only when they differ between base and head. */
  scopes?: Fact;
  objectives?: Fact;
  deprecation?: Fact;
}

export interface Comparison {
  base: { source: string; version: string; released: boolean };
  head: { source: string; version: string };
  version: {
    /** The release the step is measured from: the base when it is one, else the last release below the head. */
    release: string | null;
    /** The step the changes from base to head need (for a base that is no release: what the head adds to it). */
    needed: Bump;
    /** The step info.version takes from that release. */
    made: Bump;
    enough: boolean;
  };
  gate: { passed: boolean; breaking: number };
  counts: Record<'breaking' | 'warning' | 'additive' | 'none', number>;
  operations: OperationReview[];
  /** Changes tied to no operation: servers, components, security schemes. */
  other: Change[];
  client: ClientChanges;
  changelog: string;
}

export interface Review {
  version: typeof reviewFormat;
  date: string;
  comparisons: Comparison[];
}

const shapeOf = (method: string, path: string) => `${method} ${path.replace(/\{[^}]*\}/g, '{}')}`;

const scopesOf = (operation: JsonObject, document: JsonObject) =>
  requirementsOf(operation, document).map(describeAlternative).join(' or ') || 'none';
const objectivesOf = (operation: JsonObject) =>
  operation['x-slo'] === undefined ? 'none' : JSON.stringify(operation['x-slo']);
const deprecationOf = (operation: JsonObject) =>
  operation['deprecated'] === true
    ? `deprecated, sunset ${String(operation['x-sunset'] ?? 'none')}${operation['x-replacement'] ? `, replaced by ${JSON.stringify(operation['x-replacement'] as Json)}` : ''}`
    : 'not deprecated';

/** The changes grouped by operation (in the diff's order), each with what differs of its scopes, objectives, deprecation. */
function byOperation(base: JsonObject, head: JsonObject, changes: Change[]): OperationReview[] {
  const before = operationsOf(dereference(base));
  const after = operationsOf(dereference(head));
  const groups = new Map<string, OperationReview>();
  for (const change of changes) {
    const { operation } = change;
    if (!operation) continue;
    const key = shapeOf(operation.method, operation.path);
    const group = groups.get(key) ?? { ...operation, changes: [] };
    group.changes.push(change);
    groups.set(key, group);
  }
  for (const [key, group] of groups) {
    const was = before.get(key)?.value;
    const is = after.get(key)?.value;
    const facts: Array<
      ['scopes' | 'objectives' | 'deprecation', (operation: JsonObject, document: JsonObject) => string]
    > = [
      ['scopes', scopesOf],
      ['objectives', objectivesOf],
      ['deprecation', deprecationOf],
    ];
    for (const [name, fact] of facts) {
      const fromBase = was ? fact(was, base) : 'absent';
      const fromHead = is ? fact(is, head) : 'absent';
      // An added operation shows its own (before: absent); a removed one has nothing left to show.
      if (fromBase !== fromHead && is) group[name] = { before: fromBase, after: fromHead };
    }
  }
  return [...groups.values()];
}

/** Whether the document is the released contract of its own version. */
function isRelease(document: JsonObject): boolean {
  const file = releasedFile(versionOf(document));
  return existsSync(file) && same(readContractFile(file), document);
}

/** One comparison; `client` is what the generated clients' declarations say. */
export function compare(base: LoadedContract, head: LoadedContract, date: string, client: ClientChanges): Comparison {
  const changes = diff(base.document, head.document, { today: date });
  const [from, to] = [versionOf(base.document), versionOf(head.document)];
  const released = isRelease(base.document);
  // A base that is no release (unreleased main): the head's version is measured from the last release below it.
  const release = released
    ? from
    : (releasedVersions()
        .filter((version) => compareVersions(version, to) <= 0)
        .at(-1) ?? null);
  const needed = bumpNeeded(changes);
  const made = release === null ? 'major' : bumpBetween(release, to);
  const breaking = changes.filter((change) => change.level === 'breaking').length;
  const majorMoved = release === null || majorOf(to) > majorOf(release);
  const count = (level: Change['level']) => changes.filter((change) => change.level === level).length;
  return {
    base: { source: base.source, version: from, released },
    head: { source: head.source, version: to },
    version: { release, needed, made, enough: covers(made, needed) },
    gate: { passed: breaking === 0 || majorMoved, breaking },
    counts: {
      breaking: count('breaking'),
      warning: count('warning'),
      additive: count('additive'),
      none: count('none'),
    },
    operations: byOperation(base.document, head.document, changes),
    other: changes.filter((change) => !change.operation),
    client,
    changelog: changelogEntries(base.document, head.document, changes),
  };
}

const textOf = (contract: LoadedContract) => ({
  document: contract.document,
  text: contract.text ?? JSON.stringify(contract.document),
});

/** The review of `head` against each base (a base with the same contract as an earlier one is left out). */
export async function review(bases: LoadedContract[], head: LoadedContract, date: string): Promise<Review> {
  const distinct = bases.filter(
    (base, index) => !bases.slice(0, index).some((earlier) => same(earlier.document, base.document)),
  );
  const clients = await clientsOf([head, ...distinct].map(textOf));
  const comparisons = distinct.map((base, index) =>
    compare(base, head, date, compareClients(clients[index + 1]!, clients[0]!)),
  );
  return { version: reviewFormat, date, comparisons };
}

const levelOf = (change: Change) =>
  `${change.level === 'breaking' ? '**breaking**' : change.level}${change.reviewed ? ' (reviewed)' : ''}`;

/** One line per change; a reviewed reason is written once per list, then referred to. */
function changeLines(changes: Change[]): string[] {
  const reasons = new Map<string, string>();
  return changes.flatMap((change) => {
    const lines = [`- ${levelOf(change)}: ${change.consumer} (${code(change.rule)})`];
    const example = change.counterExample;
    if (example)
      lines.push(
        `  - for example ${literal(example.value)}: accepted by the ${example.acceptedBy}, refused by the ${example.refusedBy}`,
      );
    if (change.reviewed) {
      const first = reasons.get(change.reviewed);
      lines.push(`  - reviewed: ${first ? `as for ${code(first)} above` : change.reviewed}`);
      if (!first) reasons.set(change.reviewed, change.rule);
    }
    return lines;
  });
}

const order: Record<string, number> = { breaking: 0, warning: 1, additive: 2, none: 3 };
const sorted = (changes: Change[]) => [...changes].sort((a, b) => (order[a.level] ?? 0) - (order[b.level] ?? 0));

function operationSection(operation: OperationReview): string[] {
  const facts = (['scopes', 'objectives', 'deprecation'] as const).flatMap((name) => {
    const fact = operation[name];
    if (!fact) return [];
    return [`- ${name}: ${fact.before === 'absent' ? '' : `${inline(fact.before)} → `}${inline(fact.after)}`];
  });
  return [
    `#### ${code(operation.operationId)} (${operation.method} ${operation.path})`,
    '',
    ...changeLines(sorted(operation.changes)),
    ...facts,
    '',
  ];
}

function clientSection(client: ClientChanges): string[] {
  const refusals = (['base', 'head'] as const).flatMap((side) => {
    const reason = client.refused[side];
    return reason === undefined ? [] : [`- **the generator refuses the ${side}**: ${reason}`];
  });
  if (refusals.length > 0) return refusals;
  const lines = [
    ...client.removed.map(({ name, before }) => `- **removed** ${code(name)}: ${inline(before ?? '')}`),
    ...client.changed.flatMap(({ name, before, after }) => [
      `- changed ${code(name)}:`,
      `  - before: ${inline(before ?? '')}`,
      `  - after: ${inline(after ?? '')}`,
    ]),
    ...client.added.map(({ name, after }) => `- added ${code(name)}: ${inline(after ?? '')}`),
  ];
  return lines.length > 0 ? lines : ['No declaration of the client changes.'];
}

function versionLine(comparison: Comparison): string {
  const { version, base, head, counts } = comparison;
  const tally = `${counts.breaking} breaking, ${counts.warning} warning, ${counts.additive} additive, ${counts.none} none`;
  const step = version.made === 'none' ? 'no step' : `a ${version.made} step`;
  const verdict = version.enough ? 'enough' : '**not enough**';
  if (base.released)
    return `- **Version**: the changes ${version.needed === 'none' ? 'need no release' : `need a ${version.needed} release`} (${tally}); info.version ${base.version} → ${head.version} is ${step}: ${verdict}.`;
  const from = version.release === null ? 'no earlier release' : `the last release ${version.release}`;
  const needs = version.needed === 'none' ? 'needs no release' : `needs a ${version.needed} release`;
  return (
    `- **Version**: the base is not a release, so only what the head adds to it is judged: it ${needs} (${tally}); ` +
    `info.version ${head.version} is ${step} from ${from}: ${verdict}.`
  );
}

function gateLine({ gate, base, version }: Comparison): string {
  const verdict = gate.passed ? 'passes' : `**fails**: ${gate.breaking} breaking change(s)`;
  const moved = gate.breaking > 0 && gate.passed ? ' (the major number moved)' : '';
  if (base.released) return `- **Gate** (\`npm run contract -- breaking\`): ${verdict}${moved}.`;
  return `- **Breaking changes it adds**: ${gate.breaking === 0 ? 'none' : `${gate.breaking}, ${gate.passed ? `allowed: a major step from ${version.release ?? 'no release'}` : '**refused** without a major step'}`}.`;
}

function comparisonMarkdown(comparison: Comparison, date: string): string {
  const { base, head } = comparison;
  const others = sorted(comparison.other);
  const lines = [
    `## Contract review: ${code(head.source)} (${head.version}) against ${code(base.source)} (${base.version}${base.released ? ', released' : ', not released'})`,
    '',
    `- **Date**: ${date} (sunsets are judged against this day; \`--date ${date}\` reviews again as of it).`,
    versionLine(comparison),
    gateLine(comparison),
    '',
    '### Changes by operation',
    '',
    ...(comparison.operations.length === 0
      ? ['No operation changes.', '']
      : comparison.operations.flatMap(operationSection)),
    ...(others.length === 0
      ? []
      : ['#### Not tied to one operation (servers, components)', '', ...changeLines(others), '']),
    '### The first-party client (clients/typescript): declarations before and after',
    '',
    ...clientSection(comparison.client),
    '',
    '### Changelog entries this change produces',
    '',
    comparison.changelog.trimEnd().replace(/^### /gm, '#### '),
  ];
  return `${lines.join('\n')}\n`;
}

export const reviewMarkdown = (report: Review): string =>
  report.comparisons.map((comparison) => comparisonMarkdown(comparison, report.date)).join('\n');

/** The bases when none is given: the last release's spec; under CI the merge base with the target branch too. */
function defaultBases(): string[] {
  const release = previousRelease();
  const latest = releasedVersions().at(-1);
  const bases = [releasedFile(release?.version ?? latest ?? '')];
  if (!process.env['CI']) return bases;
  const target = process.env['GITHUB_BASE_REF'] ? `origin/${process.env['GITHUB_BASE_REF']}` : 'origin/main';
  try {
    const mergeBase = execFileSync('git', ['merge-base', 'HEAD', target], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    if (mergeBase) bases.push(mergeBase);
  } catch {
    // No target branch in this clone: the last release is the only base.
  }
  return bases;
}

/** The command: its exit code (0 whatever the verdict, 2 on input it cannot read or a bad option), text to `io`. */
export async function runReview(args: string[], io: Output = processOutput('')): Promise<number> {
  let work: Promise<Review> | undefined;
  let json = false;
  const status = runCommand('review', reviewUsage, io, () => {
    const values = parseOptions(args, {
      base: { type: 'string', multiple: true },
      head: { type: 'string' },
      date: { type: 'string' },
      json: { type: 'boolean', default: false },
    });
    json = values.json;
    const head = loadContract(values.head ?? join(repoRoot, 'openapi.yaml'));
    const bases = (values.base ?? defaultBases()).map((source) => loadContract(source));
    work = review(bases, head, dayOf(values.date));
    return 0;
  });
  if (!work) return status;
  const report = await work;
  io.out(json ? `${JSON.stringify(report, null, 2)}\n` : reviewMarkdown(report));
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  void runReview(process.argv.slice(2)).then((status) => {
    process.exitCode = status;
  });
