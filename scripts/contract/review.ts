/**
 * npm run contract -- review [--base FILE|REV]... [--head FILE|REV] [--date YYYY-MM-DD] [--json] [--out FILE]
 *
 * What a change of openapi.yaml does to consumers, as Markdown for a pull-request comment (or JSON, whose shape is
 * contract/review.schema.json): per comparison, the version step it needs (for the wire and for the client's
 * source, versionStep.ts), each changed operation with one sentence per change and its rule id (the one diff,
 * lib/contract/diff.ts), the first-party client's declarations before and after (clientDeclarations.ts), and the
 * changelog entries it produces. The bases (defaultBases) put what the change adds first: the merge base with the
 * target branch under CI, HEAD elsewhere; then the last release (contract/releases.json). A base that is a release
 * is judged whole; one that is not (unreleased main) is judged for what the head adds on top, against the step
 * info.version takes from the last release. --date (default today, UTC) is the day sunsets are judged against, so a
 * review can be run again. A change of a shared component reaching several places is said once, naming them; the
 * Markdown stops at reviewLimit characters (one GitHub comment) with a line saying what was left out, and --out FILE
 * writes the whole review to FILE instead of stdout. Exit 0 whatever the verdict (the gate judges); 2 on input it
 * cannot read, an option it does not know, or a FILE it cannot write; 2 too, with npm run generate's report on
 * stderr and nothing on stdout (--json or not), on a head using a construct docs/constructs.md refuses for the
 * review (a base is reviewed all the same: lib/contract/readable.ts).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Change } from '../../lib/contract/change.js';
import { changes as changelogEntries } from '../../lib/contract/changelog.js';
import { diff } from '../../lib/contract/diff.js';
import { loadContract, type LoadedContract } from '../../lib/contract/load.js';
import { baseNote, readableHead } from '../../lib/contract/readable.js';
import { operationsOf } from '../../lib/contract/operations.js';
import { isReleasedContract, majorOf, releasedFile, releasedVersions } from '../../lib/contract/released.js';
import { componentOf, componentsSentence, subjectOf } from '../../lib/contract/consumer.js';
import { describeAlternative, requirementsOf } from '../../lib/contract/securityDiff.js';
import { componentName, placeKey, placesOf, sharedChanges, type SharedChange } from '../../lib/contract/shared.js';
import { code, forExample, forIgnored, inline } from '../../lib/contract/text.js';
import { countsOf, versionOf, type Bump, type Counts } from '../../lib/contract/verdict.js';
import { dereference, same, type Json, type JsonObject } from '../../lib/openapi/dereference.js';
import { previousRelease } from '../../lib/releases/record.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { clientsOf, compareClients, type ClientChanges, type DeclarationChange } from './clientDeclarations.js';
import { clientLines } from './clientLines.js';
import { releaseBelow, versionStep, type VersionStep } from './versionStep.js';
import { dayOf, parseOptions, processOutput, runCommand, type Output } from './commandLine.js';

/** The shape's version (contract/review.schema.json): raised when a field changes meaning or goes away. */
export const reviewFormat = 1;

export const reviewUsage =
  'npm run contract -- review [--base FILE|REV]... [--head FILE|REV] [--date YYYY-MM-DD] [--json] [--out FILE]';

/** The most the Markdown holds on stdout: a GitHub comment holds 65,536 characters. --out FILE writes it whole. */
export const reviewLimit = 60_000;

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

export type { Place, SharedChange } from '../../lib/contract/shared.js';

export interface Comparison {
  base: { source: string; version: string; released: boolean };
  head: { source: string; version: string };
  /** The step needed (the larger of the wire's and the client source's) and the step info.version makes. */
  version: VersionStep;
  gate: { passed: boolean; breaking: number };
  counts: Counts;
  operations: OperationReview[];
  /** Changes of one shared component at two places or more, once each; their places' changes are also in `operations`. */
  shared: SharedChange[];
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

const schemaNames = (document: JsonObject) =>
  new Set(
    Object.keys(((document['components'] as JsonObject | undefined)?.['schemas'] as JsonObject | undefined) ?? {}),
  );

/** The client's changes, each type a schema exports under its own name marked so (a rename can keep the old name). */
function withSchemas(client: ClientChanges, base: JsonObject, head: JsonObject): ClientChanges {
  const mark = (names: Set<string>) => (change: DeclarationChange) =>
    names.has(change.name) ? { ...change, schema: true as const } : change;
  return {
    ...client,
    removed: client.removed.map(mark(schemaNames(base))),
    added: client.added.map(mark(schemaNames(head))),
  };
}

/** One comparison; `client` is what the generated clients' declarations say. */
export function compare(base: LoadedContract, head: LoadedContract, date: string, client: ClientChanges): Comparison {
  const changes = diff(base.document, head.document, { today: date });
  const [from, to] = [versionOf(base.document), versionOf(head.document)];
  const released = isReleasedContract(base.document);
  // A base that is no release (unreleased main): the head's version is measured from the last release below it.
  const release = released ? from : releaseBelow(to);
  const breaking = changes.filter((change) => change.level === 'breaking').length;
  const majorMoved = release === null || majorOf(to) > majorOf(release);
  return {
    base: { source: base.source, version: from, released },
    head: { source: head.source, version: to },
    version: versionStep(release, to, changes, client),
    gate: { passed: breaking === 0 || majorMoved, breaking },
    counts: countsOf(changes),
    operations: byOperation(base.document, head.document, changes),
    shared: sharedChanges(base.document, head.document, changes),
    other: changes.filter((change) => !change.operation),
    client: withSchemas(client, base.document, head.document),
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

/** Changes a reader cannot tell apart (one level, one sentence, one reviewed reason), each with its rule ids. */
function alike(changes: Change[]): Array<{ change: Change; rules: string[] }> {
  const said = new Map<string, { change: Change; rules: string[] }>();
  for (const change of changes) {
    const key = JSON.stringify([change.level, change.consumer, change.reviewed ?? '']);
    const one = said.get(key);
    if (one) {
      one.rules.push(change.rule);
      // The line shows an example when any of them has one.
      if (!one.change.counterExample && change.counterExample) one.change.counterExample = change.counterExample;
      if (!one.change.ignoredExample && change.ignoredExample) one.change.ignoredExample = change.ignoredExample;
    } else said.set(key, { change, rules: [change.rule] });
  }
  return [...said.values()];
}

/**
 * One line per thing said: changes alike are said once with all their rule ids and the first one's example (every
 * example is in --json); a reviewed reason is written once per list, then referred to.
 */
function changeLines(changes: Change[]): string[] {
  const reasons = new Map<string, string>();
  return alike(changes).flatMap(({ change, rules }) => {
    const lines = [`- ${levelOf(change)}: ${change.consumer} (${[...new Set(rules)].map(code).join(', ')})`];
    if (change.counterExample) lines.push(`  - ${forExample(change.counterExample)}`);
    if (change.ignoredExample) lines.push(`  - ${forIgnored(change.ignoredExample, change.pointer)}`);
    if (change.reviewed) {
      const first = reasons.get(change.reviewed);
      lines.push(`  - reviewed: ${first ? `as for ${code(first)} above` : change.reviewed}`);
      if (!first) reasons.set(change.reviewed, change.rule);
    }
    return lines;
  });
}

/**
 * Components of one kind changed alike (one rule, one level) as one line naming them all: one shared change (a
 * header every response uses) changes many, and fifteen alike lines hide the rest. --json keeps one change each.
 */
function componentsTogether(changes: Change[]): Change[] {
  // A change saying more than its component's name (a new schema's description) keeps its own line.
  const alike = (change: Change) =>
    /^component-/.test(change.rule) && change.consumer === componentsSentence(change.rule, [componentOf(change)])
      ? `${change.level} ${change.rule}`
      : undefined;
  const groups = new Map<string, Change[]>();
  for (const change of changes) {
    const key = alike(change);
    if (key !== undefined) groups.set(key, [...(groups.get(key) ?? []), change]);
  }
  return changes.flatMap((change) => {
    const group = groups.get(alike(change) ?? '');
    if (!group || group.length < 2) return [change];
    if (group[0] !== change) return [];
    return [{ ...change, consumer: componentsSentence(change.rule, group.map(componentOf)) }];
  });
}

const order: Record<string, number> = { breaking: 0, warning: 1, additive: 2, none: 3 };
const sorted = (changes: Change[]) => [...changes].sort((a, b) => (order[a.level] ?? 0) - (order[b.level] ?? 0));

/** The most places a shared change names in the text; --json lists them all. */
export const placesNamed = 24;

/** A component's kind, by its folder under #/components. */

/**
 * A shared change's sentence said of the component, not of its first place: its place ("`nickname` in each item of
 * the `200` response") becomes the component's ("`nickname` in the shared schema `Pet`"), its operation "each
 * operation below". The change itself (--json) keeps the first place's sentence.
 */
export function sharedSentence({ component, pointer, change }: SharedChange): string {
  const property = /\/properties\/([^/]+)$/.exec(pointer)?.[1]?.replace(/~1/g, '/').replace(/~0/g, '~');
  const shared = `the shared ${componentName(component, '')}`;
  const subject = subjectOf(change);
  const operation = change.operation ? `${change.operation.method} ${change.operation.path}` : undefined;
  // The component is the whole value at a named place (a property whose schema it is): that name stays.
  const header = /^the (`[^`]+`) header of /.exec(subject)?.[1];
  const named = header ? `the ${header} header` : /^(`[^`]+`) in /.exec(subject)?.[1];
  const said = property ? `${code(property)} in ${shared}` : named ? `${named} (${shared})` : shared;
  let text = change.consumer.includes(subject)
    ? change.consumer.replace(subject, said)
    : // A sentence showing a part of its example names the answer it is in ("in the `400` response").
      change.consumer.replace(/ in (?:each item of )?the `[^`]+` response/, ` in ${shared}`);
  if (operation) text = text.split(operation).join('each operation below');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

/** A change of a shared component, once: its sentence said of the component, the component, the places it reaches. */
function sharedLines(shared: SharedChange[]): string[] {
  return shared.flatMap((one) => {
    const { component, pointer, change, places } = one;
    const [first, ...rest] = changeLines([{ ...change, consumer: sharedSentence(one) }]);
    const named = places.slice(0, placesNamed).map((place) => `${place.operationId} ${place.where}`);
    if (places.length > placesNamed) named.push('…');
    const where = componentName(component, pointer);
    return [
      first ?? '',
      `  - one change of the shared ${where}, used by ${named.join(', ')} (${places.length} places)`,
      ...rest,
    ];
  });
}

function operationSection(operation: OperationReview, grouped: Set<string>): string[] {
  const changes = operation.changes.filter((change) => !grouped.has(placeKey(operation, change.pointer, change.rule)));
  const facts = (['scopes', 'objectives', 'deprecation'] as const).flatMap((name) => {
    const fact = operation[name];
    if (!fact) return [];
    return [`- ${name}: ${fact.before === 'absent' ? '' : `${inline(fact.before)} → `}${inline(fact.after)}`];
  });
  if (changes.length === 0 && facts.length === 0) return [];
  return [
    `#### ${code(operation.operationId)} (${operation.method} ${operation.path})`,
    '',
    ...changeLines(sorted(changes)),
    ...facts,
    '',
  ];
}

const release = (bump: Bump) => (bump === 'none' ? 'no release' : `a ${bump} release`);

/** Why the step is needed: the wire's step with its tally, the client source's with what it removes and adds. */
function stepReasons({ version, counts, client }: Comparison): string {
  const tally = `${counts.breaking} breaking, ${counts.warning} warning, ${counts.additive} additive, ${counts.none} none`;
  const names = `${client.removed.length} exported name(s) removed, ${client.added.length} added`;
  return `the wire ${release(version.wire)} (${tally}), the client's source ${release(version.source)} (${names})`;
}

function versionLine(comparison: Comparison): string {
  const { version, base, head } = comparison;
  const step = version.made === 'none' ? 'no step' : `a ${version.made} step`;
  const verdict = version.enough ? 'enough' : '**not enough**';
  const why = stepReasons(comparison);
  if (base.released)
    return `- **Version**: the changes need ${release(version.needed)}: ${why}; info.version ${base.version} → ${head.version} is ${step}: ${verdict}.`;
  const from = version.release === null ? 'no earlier release' : `the last release ${version.release}`;
  return (
    `- **Version**: the base is not a release, so only what the head adds to it is judged: it needs ${release(version.needed)}: ${why}; ` +
    `info.version ${head.version} is ${step} from ${from}: ${verdict}.`
  );
}

function gateLine({ gate, base, version }: Comparison): string {
  const verdict = gate.passed ? 'passes' : `**fails**: ${gate.breaking} breaking change(s)`;
  const moved = gate.breaking > 0 && gate.passed ? ' (the major number moved)' : '';
  if (base.released) return `- **Gate** (\`npm run contract -- breaking\`): ${verdict}${moved}.`;
  return `- **Breaking changes it adds**: ${gate.breaking === 0 ? 'none' : `${gate.breaking}, ${gate.passed ? `allowed: a major step from ${version.release ?? 'no release'}` : '**refused** without a major step'}`}.`;
}

/** Nothing to say: no change on the wire and none in the client. */
const unchanged = ({ operations, shared, other, client }: Comparison) =>
  [operations, shared, other, client.added, client.removed, client.changed].every((list) => list.length === 0) &&
  client.refused.base === undefined &&
  client.refused.head === undefined;

function comparisonMarkdown(comparison: Comparison, date: string): string {
  const { base, head } = comparison;
  const others = sorted(comparison.other);
  const shared = [...comparison.shared].sort((a, b) => (order[a.change.level] ?? 0) - (order[b.change.level] ?? 0));
  const grouped = placesOf(shared);
  const operations = comparison.operations.flatMap((operation) => operationSection(operation, grouped));
  const title = `## Contract review: ${code(head.source)} (${head.version}) against ${code(base.source)} (${base.version}${base.released ? ', released' : ', not released'})`;
  const dated = `- **Date**: ${date} (sunsets are judged against this day; \`--date ${date}\` reviews again as of it).`;
  if (unchanged(comparison))
    return `${title}\n\n${dated}\n- **Nothing for consumers**: no change on the wire, none in the client's declarations.\n`;
  const lines = [
    title,
    '',
    dated,
    versionLine(comparison),
    gateLine(comparison),
    '',
    ...(shared.length === 0
      ? []
      : [
          '### Changes of shared components, each said once with the places it reaches',
          '',
          ...sharedLines(shared),
          '',
        ]),
    '### Changes by operation',
    '',
    ...(operations.length > 0
      ? operations
      : [shared.length === 0 ? 'No operation changes.' : 'No other operation changes.', '']),
    ...(others.length === 0
      ? []
      : ['#### Not tied to one operation (servers, components)', '', ...changeLines(componentsTogether(others)), '']),
    '### The first-party client (clients/typescript): declarations before and after',
    '',
    ...clientLines(comparison.client),
    '',
    '### Changelog entries this change produces',
    '',
    comparison.changelog.trimEnd().replace(/^### /gm, '#### '),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * The text cut, at a line, to `limit` characters with its last line saying how many lines were left out and how to
 * get them all.
 */
export function capped(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const lines = text.trimEnd().split('\n');
  const note = (left: number) =>
    `\n… ${left.toLocaleString('en-US')} more line(s) left out: the review stops at ${limit.toLocaleString('en-US')} characters, to fit one GitHub comment. \`--out FILE\` writes it whole to FILE; \`--json\` gives all of it as JSON.\n`;
  let kept = 0;
  let length = 0;
  // The note's length for the most lines that could be left out: what is kept never exceeds the limit.
  const room = limit - note(lines.length).length;
  while (kept < lines.length && length + lines[kept]!.length + 1 <= room) length += lines[kept++]!.length + 1;
  return `${lines.slice(0, kept).join('\n')}\n${note(lines.length - kept)}`;
}

/** The review as Markdown, cut to `limit` characters (reviewLimit: one GitHub comment). */
export const reviewMarkdown = (report: Review, limit = reviewLimit): string =>
  capped(report.comparisons.map((comparison) => comparisonMarkdown(comparison, report.date)).join('\n'), limit);

/** The commit where HEAD left `target` (a branch or revision), read by git in `cwd`; undefined when git cannot tell. */
export function mergeBaseWith(target: string, cwd = repoRoot): string | undefined {
  try {
    const commit = execFileSync('git', ['merge-base', 'HEAD', target], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return commit === '' ? undefined : commit;
  } catch {
    return undefined;
  }
}

/**
 * The bases when none is given, what the pull request adds first: under CI (`CI` set) the merge base with the target
 * branch (`GITHUB_BASE_REF`, else main, from origin), elsewhere HEAD (the committed tree, the working tree being the
 * head); then the last release. Without the target branch in the clone, CI gets the release alone.
 */
export function defaultBases(
  env: NodeJS.ProcessEnv = process.env,
  mergeBase: (target: string) => string | undefined = mergeBaseWith,
): string[] {
  const release = releasedFile(previousRelease()?.version ?? releasedVersions().at(-1) ?? '');
  if (!env['CI']) return ['HEAD', release];
  const added = mergeBase(`origin/${env['GITHUB_BASE_REF'] || 'main'}`);
  return added === undefined ? [release] : [added, release];
}

/** The command: its exit code (0 whatever the verdict, 2 on input it cannot read or a bad option), text to `io`. */
export async function runReview(args: string[], io: Output = processOutput('')): Promise<number> {
  let work: Promise<Review> | undefined;
  let json = false;
  let out: string | undefined;
  const status = runCommand('review', reviewUsage, io, () => {
    const values = parseOptions(args, {
      base: { type: 'string', multiple: true },
      head: { type: 'string' },
      date: { type: 'string' },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
    });
    json = values.json;
    out = values.out;
    const head = readableHead(loadContract(values.head ?? join(repoRoot, 'openapi.yaml')));
    const bases = (values.base ?? defaultBases()).map((source) => loadContract(source));
    for (const note of bases.map(baseNote)) if (note) io.err(note);
    work = review(bases, head, dayOf(values.date));
    return 0;
  });
  if (!work) return status;
  const report = await work;
  const text = json ? `${JSON.stringify(report, null, 2)}\n` : reviewMarkdown(report, out ? Infinity : reviewLimit);
  if (out === undefined) {
    io.out(text);
    return 0;
  }
  try {
    writeFileSync(out, text);
  } catch (error) {
    io.err(`contract review: --out ${out}: ${(error as Error).message}\n`);
    return 2;
  }
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  void runReview(process.argv.slice(2)).then((status) => {
    process.exitCode = status;
  });
