/**
 * npm run contract -- breaking [--base FILE|REV] [--head FILE|REV] [--date YYYY-MM-DD] [--json]
 *
 * The gate's view of the one diff (lib/contract/diff.ts) of openapi.yaml against
 * the last released contract (the highest version under contract/released/):
 * every breaking change with its rule id, operation and JSON pointer; warnings
 * after. Exit 0: no breaking change, or the major number of info.version moved;
 * 1: a breaking change; 2: an input that cannot be compared or an option it does not know (one line on
 * stderr, and the usage line), or a head using a construct docs/constructs.md refuses for the gate (npm run
 * generate's report on stderr; a base is compared all the same: lib/contract/readable.ts). --date: the day a sunset is judged against (default today, UTC). --json: the
 * same verdict as one JSON document whose shape is contract/breaking.schema.json (BreakingReport), its keys those
 * of a comparison in review --json for the same things.
 */
import { join } from 'node:path';
import type { Change } from '../../lib/contract/change.js';
import { diff } from '../../lib/contract/diff.js';
import { loadContract, type LoadedContract } from '../../lib/contract/load.js';
import { baseNote, readableHead } from '../../lib/contract/readable.js';
import { forExample, forIgnored } from '../../lib/contract/text.js';
import { isReleasedContract, lastReleased } from '../../lib/contract/released.js';
import { countsOf, verdictOf, versionOf, type Counts } from '../../lib/contract/verdict.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { dayOf, parseOptions, processOutput, runCommand, type Output } from './commandLine.js';

export type { Output };

/** The shape's version (contract/breaking.schema.json): raised when a field changes meaning or goes away. */
export const breakingFormat = 1;

/** breaking --json: named as a comparison of review --json names the same things (contract/review.schema.json). */
export interface BreakingReport {
  version: typeof breakingFormat;
  /** The day sunsets are judged against. */
  date: string;
  base: { source: string; version: string; released: boolean };
  head: { source: string; version: string };
  /** The exit code's reason: passed unless a breaking change and the major number of info.version did not move. */
  gate: { passed: boolean; breaking: number; majorMoved: boolean };
  counts: Counts;
  /** Every change, in the diff's order (lib/contract/diff.ts). */
  changes: Change[];
}
export const breakingUsage =
  'npm run contract -- breaking [--base FILE|REV] [--head FILE|REV] [--date YYYY-MM-DD] [--json]';

/**
 * A change as the gate prints it: the level and rule id, the operation, the consumer's sentence; under it the
 * counter-example (when a value shows the change), where it is, and a reviewed reason (written once, then referred to).
 */
function lines(changes: Change[]): string[] {
  const reasons = new Map<string, string>();
  return changes.map((change) => {
    const operation = change.operation
      ? `${change.operation.operationId} (${change.operation.method} ${change.operation.path})`
      : 'components';
    const example = change.counterExample;
    const ignored = change.ignoredExample;
    const shown = example
      ? `\n      ${forExample(example)}`
      : ignored
        ? `\n      ${forIgnored(ignored, change.pointer)}`
        : '';
    let reviewed = '';
    if (change.reviewed) {
      const first = reasons.get(change.reviewed);
      reviewed = `\n      reviewed: ${first ? `as for ${first} above` : change.reviewed}`;
      if (!first) reasons.set(change.reviewed, `${change.rule} ${operation}`);
    }
    return (
      `  ${change.level === 'breaking' ? 'x' : '!'} ${change.level} ${change.rule} ${operation}: ${change.consumer}` +
      `${shown}\n      at ${change.side} #${change.pointer}${reviewed}`
    );
  });
}

/**
 * The gate's judgement of `head` against `base` on `today`, as --json gives it. It reads whatever the specs hold:
 * the command refuses a head the catalogue refuses before asking (lib/contract/readable.ts).
 */
export function breakingReport(base: LoadedContract, head: LoadedContract, today: string): BreakingReport {
  const changes = diff(base.document, head.document, { today });
  const verdict = verdictOf(changes, base.document, head.document);
  return {
    version: breakingFormat,
    date: today,
    base: { source: base.source, version: versionOf(base.document), released: isReleasedContract(base.document) },
    head: { source: head.source, version: versionOf(head.document) },
    gate: { passed: verdict.passed, breaking: verdict.breaking.length, majorMoved: verdict.majorMoved },
    counts: countsOf(changes),
    changes,
  };
}

/** The command: its exit code (0 pass, 1 breaking, 2 bad input or usage), its lines written to `io`. */
export function runBreaking(args: string[], io: Output = processOutput()): number {
  return runCommand('breaking', breakingUsage, io, () => compare(args, io), '');
}

function compare(args: string[], io: Output): number {
  const values = parseOptions(args, {
    base: { type: 'string' },
    head: { type: 'string' },
    date: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const base = loadContract(values.base ?? lastReleased());
  const head = readableHead(loadContract(values.head ?? join(repoRoot, 'openapi.yaml')));
  const note = baseNote(base);
  if (note) io.err(note.trimEnd());
  const report = breakingReport(base, head, dayOf(values.date));
  if (values.json) {
    io.out(JSON.stringify(report, null, 2));
    return report.gate.passed ? 0 : 1;
  }
  const { changes, gate, date } = report;
  const [from, to] = [report.base.version, report.head.version];
  io.out(`Comparing ${head.source} (${to}) with ${base.source} (${from}) on ${date}: ${changes.length} changes`);
  // A base named on the command line may be any revision: it is called a release only when it is one.
  const against = values.base === undefined ? `the released contract ${from}` : `${base.source} (${from})`;
  const breaking = changes.filter((change) => change.level === 'breaking');
  const warnings = changes.filter((change) => change.level === 'warning');
  for (const text of lines([...breaking, ...warnings])) io.out(text);
  const others = changes.length - breaking.length - warnings.length;
  if (others > 0) io.out(`  (${others} additive or documentation changes: npm run contract -- review)`);
  if (breaking.length === 0) {
    io.out(`\nNo breaking change against ${against}.`);
    return 0;
  }
  if (gate.majorMoved) {
    io.out(`\nBreaking changes found, allowed: the major version moved (${from} -> ${to}).`);
    return 0;
  }
  io.err(
    `\n${breaking.length} breaking change(s) against ${against}. Undo them, or raise the ` +
      'major number of info.version in openapi.yaml (see docs/contract.md, "Cutting a release").',
  );
  return 1;
}
