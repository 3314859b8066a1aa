// The constructs a spec uses that some machine refuses: what `npm run generate` stops on before it writes
// anything, and what a tool run on a spec generate never checked throws (ConstructRefusedError) instead
// of failing deep inside.
import { dereference, type JsonObject } from '../openapi/dereference.js';
import { catalogue, type Construct } from './catalogue.js';
import { isRefused, machines, type MachineId } from './machines.js';
import { sharedWalks } from './walk.js';

export const matrixPath = 'docs/constructs.md';

/** Where a contributor reads a construct's row. */
export const matrixAnchor = (id: string) => `${matrixPath}#${id}`;

export interface Found {
  construct: Construct;
  at: string[];
}

/** Each catalogued construct the spec uses, with where. */
export function constructsIn(raw: JsonObject): Found[] {
  const spec = { raw, document: dereference(raw) };
  return sharedWalks(() =>
    catalogue.map((construct) => ({ construct, at: construct.detect(spec) })).filter((found) => found.at.length > 0),
  );
}

export interface Refusal {
  id: string;
  at: string[];
  /** The machines that refuse it, each with its message. */
  refusedBy: { machine: MachineId; message: string }[];
}

/** The constructs `raw` uses that one of `by` refuses (of one group of the catalogue, when given). */
export function refusals(
  raw: JsonObject,
  by: MachineId[] = Object.keys(machines) as MachineId[],
  group?: string,
): Refusal[] {
  const found = constructsIn(raw).filter(({ construct }) => group === undefined || construct.group === group);
  return found.flatMap(({ construct, at }) => {
    const refusedBy = by.flatMap((machine) => {
      const verdict = construct.verdicts[machine];
      return isRefused(verdict) ? [{ machine, message: verdict.refused }] : [];
    });
    return refusedBy.length > 0 ? [{ id: construct.id, at, refusedBy }] : [];
  });
}

/** One paragraph per refused construct: its id, where (JSON pointers), who refuses it and why, its row. */
export function refusalReport(source: string, found: Refusal[]): string {
  const paragraphs = found.map(({ id, at, refusedBy }) => {
    const byMessage = new Map<string, string[]>();
    for (const { machine, message } of refusedBy)
      byMessage.set(message, [...(byMessage.get(message) ?? []), machines[machine]]);
    const reasons = [...byMessage].map(([message, names]) => `  refused by ${names.join(', ')}: ${message}`);
    return [
      `- ${id} at ${at.map((pointer) => `#${pointer}`).join(', ')}`,
      ...reasons,
      `  read ${matrixAnchor(id)}`,
    ].join('\n');
  });
  return `${source} uses ${found.length} construct(s) the service's machines refuse:\n${paragraphs.join('\n')}\n`;
}

export class ConstructRefusedError extends Error {
  constructor(
    readonly machine: MachineId,
    readonly found: Refusal[],
    source = `the spec given to the ${machines[machine]}`,
  ) {
    super(refusalReport(source, found).trimEnd());
  }
}

/**
 * Throws ConstructRefusedError when `raw` uses a construct `machine` refuses (of `group`, when given); its
 * message names the spec as `source` (a file), as generate's does.
 */
export function assertSupportedBy(
  machine: MachineId,
  raw: JsonObject,
  { group, source }: { group?: string; source?: string } = {},
): void {
  const found = refusals(raw, [machine], group);
  if (found.length > 0) throw new ConstructRefusedError(machine, found, source);
}
