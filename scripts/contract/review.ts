/**
 * npm run contract -- review [--base FILE|REV] [--head FILE|REV] [--json]
 *
 * What a change of openapi.yaml does to consumers, as Markdown for a pull-request comment (or JSON): the version
 * step it needs and whether info.version takes it, every change by operation with its rule id and level (the one
 * diff, lib/contract/diff.ts), the first-party client's public API before and after, scopes, objectives
 * (x-slo) and deprecations per operation before and after, and the changelog entries it produces. The base is
 * the last release (contract/releases.json); under CI, the merge base with the target branch too, when there
 * is one and its contract differs. Exit 0 whatever the verdict (the gate judges); 2 on input it cannot read.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Change } from '../../lib/contract/change.js';
import { changes as changelogEntries } from '../../lib/contract/changelog.js';
import { diff } from '../../lib/contract/diff.js';
import { ContractInputError, loadContract, type LoadedContract } from '../../lib/contract/load.js';
import { operationsOf } from '../../lib/contract/operations.js';
import { lastReleased, releasedFile } from '../../lib/contract/released.js';
import { describeAlternative, requirementsOf } from '../../lib/contract/securityDiff.js';
import { code, inline } from '../../lib/contract/text.js';
import { bumpBetween, bumpNeeded, covers, verdictOf, versionOf, type Bump } from '../../lib/contract/verdict.js';
import { dereference, same, type Json, type JsonObject } from '../../lib/openapi/dereference.js';
import { previousRelease } from '../../lib/releases/record.js';
import { repoRoot } from '../../lib/repoRoot.js';
import type { Output } from './breaking.js';
import { clientSurface, compareSurfaces, type SurfaceChanges } from './clientSurface.js';

interface Row {
  operation: string;
  before: string;
  after: string;
}

export interface Review {
  base: { source: string; version: string };
  head: { source: string; version: string };
  version: { needed: Bump; made: Bump; enough: boolean };
  gate: { passed: boolean; breaking: number };
  changes: Change[];
  client: SurfaceChanges;
  scopes: Row[];
  objectives: Row[];
  deprecations: Row[];
  changelog: string;
}

/** One fact per operation (by operationId), before and after; an operation on one side only shows "absent". */
function perOperation(
  base: JsonObject,
  head: JsonObject,
  fact: (operation: JsonObject, document: JsonObject) => string,
): Row[] {
  const before = new Map([...operationsOf(dereference(base)).values()].map((op) => [op.ref.operationId, op.value]));
  const after = new Map([...operationsOf(dereference(head)).values()].map((op) => [op.ref.operationId, op.value]));
  const names = [...new Set([...after.keys(), ...before.keys()])];
  return names.map((operation) => {
    const was = before.get(operation);
    const is = after.get(operation);
    return {
      operation,
      before: was ? fact(was, base) : 'absent',
      after: is ? fact(is, head) : 'absent',
    };
  });
}

const scopesOf = (operation: JsonObject, document: JsonObject) =>
  requirementsOf(operation, document).map(describeAlternative).join(' or ');
const objectivesOf = (operation: JsonObject) =>
  operation['x-slo'] === undefined ? 'none' : JSON.stringify(operation['x-slo']);
const deprecationOf = (operation: JsonObject) =>
  operation['deprecated'] === true
    ? `deprecated, sunset ${String(operation['x-sunset'] ?? 'none')}${operation['x-replacement'] ? `, replaced by ${JSON.stringify(operation['x-replacement'] as Json)}` : ''}`
    : 'not deprecated';

export function review(base: LoadedContract, head: LoadedContract): Review {
  const changes = diff(base.document, head.document);
  const verdict = verdictOf(changes, base.document, head.document);
  const [from, to] = [versionOf(base.document), versionOf(head.document)];
  const needed = bumpNeeded(changes);
  const made = bumpBetween(from, to);
  return {
    base: { source: base.source, version: from },
    head: { source: head.source, version: to },
    version: { needed, made, enough: covers(made, needed) },
    gate: { passed: verdict.passed, breaking: verdict.breaking.length },
    changes,
    client: compareSurfaces(clientSurface(base.document), clientSurface(head.document)),
    scopes: perOperation(base.document, head.document, scopesOf),
    objectives: perOperation(base.document, head.document, objectivesOf),
    deprecations: perOperation(base.document, head.document, deprecationOf),
    changelog: changelogEntries(base.document, head.document, changes),
  };
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

function table(rows: Row[]): string[] {
  return [
    '| operation | before | after |',
    '|---|---|---|',
    ...rows.map(
      ({ operation, before, after }) =>
        `| ${code(operation)}${before === after ? '' : ' (changed)'} | ${cell(before)} | ${cell(after)} |`,
    ),
  ];
}

function changesSection(changes: Change[]): string[] {
  if (changes.length === 0) return ['No change.'];
  const groups = new Map<string, Change[]>();
  for (const change of changes) {
    const key = change.operation
      ? `${code(change.operation.operationId)} (${change.operation.method} ${change.operation.path})`
      : 'Components';
    groups.set(key, [...(groups.get(key) ?? []), change]);
  }
  const order: Record<string, number> = { breaking: 0, warning: 1, additive: 2, none: 3 };
  return [...groups].flatMap(([key, list]) => [
    `#### ${key}`,
    '',
    '| level | rule | change | pointer |',
    '|---|---|---|---|',
    ...[...list]
      .sort((a, b) => (order[a.level] ?? 0) - (order[b.level] ?? 0))
      .map(
        (change) =>
          `| ${change.level === 'breaking' ? '**breaking**' : change.level}${change.reviewed ? ' (reviewed)' : ''} | ${code(change.rule)} | ${cell(change.message)} | ${code(`${change.side === 'base' ? 'base ' : ''}#${change.pointer}`)} |`,
      ),
    '',
  ]);
}

function clientSection(client: SurfaceChanges): string[] {
  const lines: string[] = [];
  for (const signature of client.added) lines.push(`- added: ${inline(signature)}`);
  for (const signature of client.removed) lines.push(`- **removed**: ${inline(signature)}`);
  for (const { before, after } of client.changed) lines.push(`- changed: ${inline(before)}`, `  now: ${inline(after)}`);
  for (const name of client.typesAdded) lines.push(`- type added: ${code(name)}`);
  for (const name of client.typesRemoved) lines.push(`- **type removed**: ${code(name)}`);
  return lines.length > 0
    ? lines
    : ['No method signature or exported type changes (changes inside the types are listed above).'];
}

export function reviewMarkdown(report: Review): string {
  const { version, gate } = report;
  const counts = ['breaking', 'warning', 'additive', 'none']
    .map((level) => `${report.changes.filter((change) => change.level === level).length} ${level}`)
    .join(', ');
  const lines = [
    `## Contract review: ${code(report.head.source)} (${report.head.version}) against ${code(report.base.source)} (${report.base.version})`,
    '',
    `- **Version**: the changes need a ${version.needed} release (${counts}); info.version ${report.base.version} → ${report.head.version} is ${version.made === 'none' ? 'no step' : `a ${version.made} step`}: ${version.enough ? 'enough' : '**not enough**'}.`,
    `- **Gate** (\`npm run contract -- breaking\`): ${gate.passed ? 'passes' : `**fails**: ${gate.breaking} breaking change(s)`}${gate.breaking > 0 && gate.passed ? ' (the major number moved)' : ''}.`,
    '',
    '### Changes by operation',
    '',
    ...changesSection(report.changes),
    '### The first-party client (clients/typescript): public API',
    '',
    ...clientSection(report.client),
    '',
    '### Scopes per operation',
    '',
    ...table(report.scopes),
    '',
    '### Objectives (x-slo)',
    '',
    ...table(report.objectives),
    '',
    '### Deprecations and sunsets',
    '',
    ...table(report.deprecations),
    '',
    '### Changelog entries this change produces',
    '',
    report.changelog.trimEnd().replace(/^### /gm, '#### '),
  ];
  return `${lines.join('\n')}\n`;
}

/** The base when none is given: the last release's spec; under CI the merge base with the target branch too. */
function defaultBases(): string[] {
  const release = previousRelease();
  const bases = [release ? releasedFile(release.version) : lastReleased()];
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

const console_: Output = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** The command: its exit code (0 whatever the verdict, 2 on input it cannot read), its text written to `io`. */
export function runReview(args: string[], io: Output = console_): number {
  try {
    return main(args, io);
  } catch (error) {
    if (!(error instanceof ContractInputError)) throw error;
    io.err(`contract review: ${error.message}\n`);
    return 2;
  }
}

function main(args: string[], io: Output): number {
  const { values } = parseArgs({
    args,
    options: { base: { type: 'string' }, head: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const head = loadContract(values.head ?? join(repoRoot, 'openapi.yaml'));
  const bases = values.base ? [values.base] : defaultBases();
  const reports: Review[] = [];
  for (const source of bases) {
    const base = loadContract(source);
    if (reports.length > 0 && same(base.document, loadContract(bases[0]!).document)) continue;
    reports.push(review(base, head));
  }
  if (values.json) io.out(`${JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2)}\n`);
  else io.out(reports.map(reviewMarkdown).join('\n'));
  return 0;
}

if (process.argv[1]?.endsWith('review.ts')) process.exitCode = runReview(process.argv.slice(2));
