// The version step a change of the contract needs, judged for two audiences as Buf separates WIRE from SOURCE: the
// wire (lib/contract/diff.ts: what any client, in any language, sends and receives) and the source of the
// first-party TypeScript client (clientDeclarations.ts: its exported names). The client package carries the
// contract's version, so the step needed is the larger of the two. The review's version line and the gate's version
// check (version.ts) both take it from here.
import type { Change } from '../../lib/contract/change.js';
import { compareVersions, releasedVersions } from '../../lib/contract/released.js';
import { bumpBetween, bumpNeeded, bumpOfLevels, covers, larger, type Bump } from '../../lib/contract/verdict.js';
import type { ClientChanges } from './clientDeclarations.js';

export interface VersionStep {
  /** The release the step is measured from: the base when it is one, else the last release below the head. */
  release: string | null;
  /** What the wire changes need. */
  wire: Bump;
  /** What the client's source changes need (an exported name removed: major; added: minor). */
  source: Bump;
  /** The larger of the two. */
  needed: Bump;
  /** The step info.version takes from that release. */
  made: Bump;
  enough: boolean;
}

/** The step the client's declarations need; none when the generator refuses a side (the gate refuses that first). */
export function sourceBump(client: ClientChanges): Bump {
  if (client.refused.base !== undefined || client.refused.head !== undefined) return 'none';
  return bumpOfLevels([...client.removed, ...client.added, ...client.changed].map((change) => change.level));
}

/** The last release not above `version`: what an unreleased base's head is measured from. */
export const releaseBelow = (version: string): string | null =>
  releasedVersions()
    .filter((released) => compareVersions(released, version) <= 0)
    .at(-1) ?? null;

/** The step from `release` to the head's `version`, against what the wire `changes` and the `client` need. */
export function versionStep(
  release: string | null,
  version: string,
  changes: Change[],
  client: ClientChanges,
): VersionStep {
  const wire = bumpNeeded(changes);
  const source = sourceBump(client);
  const needed = larger(wire, source);
  const made = release === null ? 'major' : bumpBetween(release, version);
  return { release, wire, source, needed, made, enough: covers(made, needed) };
}
