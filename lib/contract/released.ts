import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { same, type JsonObject } from '../openapi/dereference.js';
import { repoRoot } from '../repoRoot.js';
import { ContractInputError, readContractFile } from './load.js';

export const releasedDir = join(repoRoot, 'contract/released');

export function compareVersions(a: string, b: string): number {
  const partsA = a.split('.').map(Number);
  const partsB = b.split('.').map(Number);
  for (let i = 0; i < 3; i += 1) {
    const difference = (partsA[i] ?? 0) - (partsB[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** The versions released so far, from contract/released/openapi-<version>.yaml, oldest first. */
export function releasedVersions(dir = releasedDir): string[] {
  return readdirSync(dir)
    .map((name) => /^openapi-(\d+\.\d+\.\d+)\.yaml$/.exec(name)?.[1])
    .filter((version): version is string => version !== undefined)
    .sort(compareVersions);
}

export const releasedFile = (version: string, dir = releasedDir) => join(dir, `openapi-${version}.yaml`);

/** contract/released/openapi-<version>.yaml with the highest version: the gate's baseline. */
export function lastReleased(dir = releasedDir): string {
  const latest = releasedVersions(dir).at(-1);
  if (!latest) throw new Error(`no contract/released/openapi-<version>.yaml baseline in ${dir}`);
  return releasedFile(latest, dir);
}

/** Whether the document is the released contract of its own version (info.version). */
export function isReleasedContract(document: JsonObject, dir = releasedDir): boolean {
  const file = releasedFile(String((document['info'] as JsonObject | undefined)?.['version']), dir);
  return existsSync(file) && same(readContractFile(file), document);
}

/** The major number of a semantic version (info.version). */
export function majorOf(version: unknown): number {
  const match = /^v?(\d+)\./.exec(String(version));
  if (!match?.[1]) throw new ContractInputError(`info.version ${JSON.stringify(version)} is not a semantic version`);
  return Number(match[1]);
}
