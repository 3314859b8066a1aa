// Reading a contract to compare: a file, or openapi.yaml at a git revision. Whatever is wrong with the input
// becomes one ContractInputError naming the source and the reason, never a stack trace.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { parse } from 'yaml';
import { dereference, isObject, type JsonObject } from '../openapi/dereference.js';
import { repoRoot } from '../repoRoot.js';

export class ContractInputError extends Error {}

/**
 * The last contracts parsed in this process, by their text: a review of many heads against one base, and the
 * suites that judge hundreds of edits against one spec, read the same text again and again, and the YAML parser
 * takes 20-30 ms for openapi.yaml where a copy of its result takes under 1. A few, as callers compare two at a
 * time.
 */
const parsedTexts = new Map<string, JsonObject>();
const parsedTextsKept = 4;

/** Parses a contract's text; int64 bounds do not fit a double, so they stay exact (as text). */
export function parseContract(text: string, source: string): JsonObject {
  const parsed = parsedTexts.get(text);
  if (parsed !== undefined) {
    parsedTexts.delete(text);
    parsedTexts.set(text, parsed);
    // A copy: callers may edit what they are given.
    return structuredClone(parsed);
  }
  const document = parsedOnce(text, source);
  parsedTexts.set(text, structuredClone(document));
  if (parsedTexts.size > parsedTextsKept) parsedTexts.delete(parsedTexts.keys().next().value!);
  return document;
}

function parsedOnce(text: string, source: string): JsonObject {
  let document: unknown;
  try {
    document = parse(
      text,
      (_key: unknown, value: unknown) =>
        typeof value === 'bigint' ? (Number.isSafeInteger(Number(value)) ? Number(value) : String(value)) : value,
      { intAsBigInt: true },
    );
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0] ?? 'unreadable';
    throw new ContractInputError(`${source}: not YAML: ${reason}`);
  }
  if (!isObject(document as JsonObject) || !isObject((document as JsonObject)['paths'] as JsonObject))
    throw new ContractInputError(`${source}: not an OpenAPI document (no paths object)`);
  const version = ((document as JsonObject)['info'] as JsonObject | undefined)?.['version'];
  if (typeof version !== 'string' || !/^\d+\.\d+\.\d+/.test(version))
    throw new ContractInputError(`${source}: info.version ${JSON.stringify(version ?? null)} is not MAJOR.MINOR.PATCH`);
  try {
    dereference(document as JsonObject);
  } catch (error) {
    throw new ContractInputError(`${source}: ${(error as Error).message}`);
  }
  return document as JsonObject;
}

export const readContractFile = (file: string): JsonObject => parseContract(readFileSync(file, 'utf8'), file);

export interface LoadedContract {
  document: JsonObject;
  /** The text it was read from (the client generator reads a file). */
  text?: string;
  /** The file, or "openapi.yaml at <ref>". */
  source: string;
}

/** A file when one exists at `source`, else openapi.yaml at the git revision `source`. */
export function loadContract(source: string, root = repoRoot): LoadedContract {
  if (existsSync(source)) {
    let text: string;
    try {
      text = readFileSync(source, 'utf8');
    } catch (error) {
      throw new ContractInputError(`${source}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
    const inTree = relative(root, resolve(source));
    const label = inTree.startsWith('..') || isAbsolute(inTree) ? source : inTree;
    return { document: parseContract(text, label), text, source: label };
  }
  const label = `openapi.yaml at ${source}`;
  let text: string;
  try {
    text = execFileSync('git', ['show', `${source}:openapi.yaml`], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch {
    throw new ContractInputError(`${source}: neither a file nor a git revision that has openapi.yaml`);
  }
  return { document: parseContract(text, label), text, source: label };
}
