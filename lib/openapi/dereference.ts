// JSON documents and local $ref resolution, for the tools that compare
// and check OpenAPI documents (the breaking-change gate, the conformance suite).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a) === JSON.stringify(b);

/** Follows a local reference (#/components/...) inside the document. */
function follow(document: JsonObject, ref: string): Json | undefined {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
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
 * is seen by every reader.
 */
export function dereference(document: JsonObject): JsonObject {
  const walk = (node: Json, seen: string[]): Json => {
    if (Array.isArray(node)) return node.map((item) => walk(item, seen));
    if (!isObject(node)) return node;
    const ref = node['$ref'];
    if (typeof ref === 'string') {
      if (seen.includes(ref)) return node;
      const target = follow(document, ref);
      if (target === undefined) throw new Error(`unresolved $ref ${ref}`);
      const resolved = walk(target, [...seen, ref]);
      const siblings = Object.entries(node).filter(([key]) => key !== '$ref');
      if (siblings.length === 0 || !isObject(resolved)) return resolved;
      return { ...resolved, ...Object.fromEntries(siblings.map(([key, value]) => [key, walk(value, seen)])) };
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value, seen)]));
  };
  return walk(document, []) as JsonObject;
}
