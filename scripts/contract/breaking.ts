/**
 * npm run contract -- breaking [--base FILE|REV] [--head FILE|REV] [--date YYYY-MM-DD] [--json]
 *
 * The gate's view of the one diff (lib/contract/diff.ts) of openapi.yaml against
 * the last released contract (the highest version under contract/released/):
 * every breaking change with its rule id, operation and JSON pointer; warnings
 * after. Exit 0: no breaking change, or the major number of info.version moved;
 * 1: a breaking change; 2: an input that cannot be compared or an option it does not know (one line on
 * stderr, and the usage line). --date: the day a sunset is judged against (default today, UTC).
 */
import { join } from 'node:path';
import type { Change } from '../../lib/contract/change.js';
import { diff } from '../../lib/contract/diff.js';
import { loadContract } from '../../lib/contract/load.js';
import { forExample } from '../../lib/contract/text.js';
import { lastReleased } from '../../lib/contract/released.js';
import { verdictOf, versionOf } from '../../lib/contract/verdict.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { dayOf, parseOptions, processOutput, runCommand, type Output } from './commandLine.js';

export type { Output };
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
    const shown = example ? `\n      ${forExample(example)}` : '';
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
  const head = loadContract(values.head ?? join(repoRoot, 'openapi.yaml'));
  const today = dayOf(values.date);
  const changes = diff(base.document, head.document, { today });
  const verdict = verdictOf(changes, base.document, head.document);
  if (values.json) {
    io.out(JSON.stringify({ base: base.source, head: head.source, date: today, ...verdict, changes }, null, 2));
    return verdict.passed ? 0 : 1;
  }
  const [from, to] = [versionOf(base.document), versionOf(head.document)];
  io.out(`Comparing ${head.source} (${to}) with ${base.source} (${from}) on ${today}: ${changes.length} changes`);
  // A base named on the command line may be any revision: it is called a release only when it is one.
  const against = values.base === undefined ? `the released contract ${from}` : `${base.source} (${from})`;
  const warnings = changes.filter((change) => change.level === 'warning');
  for (const text of lines([...verdict.breaking, ...warnings])) io.out(text);
  const others = changes.length - verdict.breaking.length - warnings.length;
  if (others > 0) io.out(`  (${others} additive or documentation changes: npm run contract -- review)`);
  if (verdict.breaking.length === 0) {
    io.out(`\nNo breaking change against ${against}.`);
    return 0;
  }
  if (verdict.majorMoved) {
    io.out(`\nBreaking changes found, allowed: the major version moved (${from} -> ${to}).`);
    return 0;
  }
  io.err(
    `\n${verdict.breaking.length} breaking change(s) against ${against}. Undo them, or raise the ` +
      'major number of info.version in openapi.yaml (see docs/contract.md, "Cutting a release").',
  );
  return 1;
}
