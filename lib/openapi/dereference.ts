// JSON documents and local $ref resolution, for the tools that compare
// and check OpenAPI documents (the breaking-change gate, the conformance suite).

import { isObject, type Json, type JsonObject } from './json.js';
import { applyTogether, namesSchema, overrideSummary } from './refSiblings.js';

export { isObject, same, type Json, type JsonObject } from './json.js';

/** A $ref that cannot be followed, with the JSON pointer of the object that holds it. */
export class UnresolvedRefError extends Error {
  constructor(
    readonly ref: string,
    readonly at: string,
    reason: string,
  ) {
    super(`$ref ${JSON.stringify(ref)} at #${at} ${reason}`);
  }
}

const step = (key: string | number) => `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** Follows a local reference (#/components/...) inside the document, written at `at`. */
function follow(document: JsonObject, ref: string, at: string): Json | undefined {
  if (!ref.startsWith('#/')) throw new UnresolvedRefError(ref, at, 'is not local (only #/... is supported)');
  let node: Json | undefined = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) ? node[key] : undefined;
  }
  return node;
}

/**
 * Replaces every $ref by what it points at (cycles are left as a $ref), with OpenAPI 3.1's meaning of keywords
 * beside it (refSiblings.ts): in a schema both apply, so a bound written there narrows and never widens; elsewhere
 * `summary` and `description` replace the target's. A $ref that resolves to nothing is an UnresolvedRefError
 * naming the pointer where it is written (inside a component, the component's own place).
 */
export function dereference(document: JsonObject): JsonObject {
  const walk = (node: Json, seen: string[], at: string): Json => {
    if (Array.isArray(node)) return node.map((item, index) => walk(item, seen, `${at}${step(index)}`));
    if (!isObject(node)) return node;
    const ref = node['$ref'];
    if (typeof ref === 'string') {
      if (seen.includes(ref)) return node;
      const target = follow(document, ref, at);
      if (target === undefined) throw new UnresolvedRefError(ref, at, 'resolves to nothing');
      const resolved = walk(target, [...seen, ref], ref.slice(1));
      const siblings = Object.entries(node).filter(([key]) => key !== '$ref');
      if (siblings.length === 0) return resolved;
      const beside = Object.fromEntries(siblings.map(([key, value]) => [key, walk(value, seen, `${at}${step(key)}`)]));
      return namesSchema(ref) ? applyTogether(resolved, beside) : overrideSummary(resolved, beside);
    }
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, walk(value, seen, `${at}${step(key)}`)]),
    );
  };
  return walk(document, [], '') as JsonObject;
}
