// The gate's view of the diff: a breaking change passes only when the major number of info.version moved.
import type { JsonObject } from '../openapi/dereference.js';
import type { Change, Level } from './change.js';
import { compareVersions, majorOf } from './released.js';

export type Bump = 'major' | 'minor' | 'patch' | 'none';

export const versionOf = (document: JsonObject) => String((document['info'] as JsonObject | undefined)?.['version']);

/** The smallest version step changes of these levels need: breaking a major, anything a client can use or should know a minor. */
export function bumpOfLevels(levels: Level[]): Bump {
  if (levels.includes('breaking')) return 'major';
  if (levels.includes('additive') || levels.includes('warning')) return 'minor';
  return levels.length > 0 ? 'patch' : 'none';
}

export const bumpNeeded = (changes: Change[]): Bump => bumpOfLevels(changes.map((change) => change.level));

/** The step from one version to the next. */
export function bumpBetween(from: string, to: string): Bump {
  if (compareVersions(to, from) <= 0) return 'none';
  const [fromMajor, fromMinor] = from.split('.').map(Number);
  const [toMajor, toMinor] = to.split('.').map(Number);
  if (toMajor !== fromMajor) return 'major';
  return toMinor !== fromMinor ? 'minor' : 'patch';
}

const rank: Record<Bump, number> = { none: 0, patch: 1, minor: 2, major: 3 };
export const covers = (made: Bump, needed: Bump) => rank[made] >= rank[needed];
export const larger = (a: Bump, b: Bump): Bump => (rank[a] >= rank[b] ? a : b);

export interface Verdict {
  breaking: Change[];
  majorMoved: boolean;
  passed: boolean;
}

export function verdictOf(changes: Change[], base: JsonObject, head: JsonObject): Verdict {
  const breaking = changes.filter((change) => change.level === 'breaking');
  const majorMoved = majorOf(versionOf(head)) > majorOf(versionOf(base));
  return { breaking, majorMoved, passed: breaking.length === 0 || majorMoved };
}

/** How many changes there are of each level: `counts` in both --json reports (contract/*.schema.json). */
export type Counts = Record<Level, number>;

export function countsOf(changes: Change[]): Counts {
  const count = (level: Level) => changes.filter((change) => change.level === level).length;
  return { breaking: count('breaking'), warning: count('warning'), additive: count('additive'), none: count('none') };
}
