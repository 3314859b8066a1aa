// JSON documents and local $ref resolution, for the tools that compare
// and check OpenAPI documents (the breaking-change gate, the conformance suite).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a) === JSON.stringify(b);

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
 * Replaces every $ref by what it points at (cycles are left as a $ref). Keywords
 * written beside a $ref (OpenAPI 3.1 allows them: `maxLength: 50` next to a
 * shared schema) are kept and win over the target's, so a bound narrowed there
 * is seen by every reader. A $ref that resolves to nothing is an UnresolvedRefError
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
      if (siblings.length === 0 || !isObject(resolved)) return resolved;
      return {
        ...resolved,
        ...Object.fromEntries(siblings.map(([key, value]) => [key, walk(value, seen, `${at}${step(key)}`)])),
      };
    }
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, walk(value, seen, `${at}${step(key)}`)]),
    );
  };
  return walk(document, [], '') as JsonObject;
}
