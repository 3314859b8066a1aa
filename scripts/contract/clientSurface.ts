// The first-party client's public API for a contract, generated in memory as `npm run generate` writes it
// (generators/clientOperations.ts, clientSource.ts): each method's signature, whether it is deprecated, and
// each exported type's name. The reviewer's report compares two of them.
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { clientOperations } from '../../generators/clientOperations.js';
import { operationsSource, typesSource } from '../../generators/clientSource.js';

export interface ClientSurface {
  /** Method name -> its declaration line ("listPets(query: ListPetsQuery = {}, ...): Promise<...>"), "@deprecated" marked. */
  methods: Map<string, string>;
  types: Set<string>;
}

export function clientSurface(document: JsonObject): ClientSurface {
  const operations = clientOperations(document);
  const source = operationsSource(operations);
  const methods = new Map<string, string>();
  let deprecated = false;
  for (const line of source.split('\n')) {
    if (/^\s+\* @deprecated/.test(line)) deprecated = true;
    const match = /^ {2}(\w+)\((.*)\): (.*) \{$/.exec(line);
    if (!match?.[1]) continue;
    methods.set(match[1], `${deprecated ? '@deprecated ' : ''}${match[1]}(${match[2]}): ${match[3]}`);
    deprecated = false;
  }
  const schemas = Object.keys((document['components'] as { schemas?: JsonObject } | undefined)?.schemas ?? {});
  const types = new Set(
    [...typesSource(schemas, operations).matchAll(/^export (?:type|interface) (\w+)/gm)].map((match) => match[1]!),
  );
  return { methods, types };
}

export interface SurfaceChanges {
  added: string[];
  removed: string[];
  changed: Array<{ before: string; after: string }>;
  typesAdded: string[];
  typesRemoved: string[];
}

export function compareSurfaces(base: ClientSurface, head: ClientSurface): SurfaceChanges {
  const changes: SurfaceChanges = { added: [], removed: [], changed: [], typesAdded: [], typesRemoved: [] };
  for (const [name, signature] of head.methods) {
    const previous = base.methods.get(name);
    if (previous === undefined) changes.added.push(signature);
    else if (previous !== signature) changes.changed.push({ before: previous, after: signature });
  }
  for (const [name, signature] of base.methods) if (!head.methods.has(name)) changes.removed.push(signature);
  changes.typesAdded = [...head.types].filter((name) => !base.types.has(name));
  changes.typesRemoved = [...base.types].filter((name) => !head.types.has(name));
  return changes;
}
