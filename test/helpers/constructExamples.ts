import { catalogue } from '../../lib/constructs/catalogue.js';
import { exampleSpec } from '../../lib/constructs/examples.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';

/** The minimal spec the catalogue gives a construct (lib/constructs/catalogue.ts). */
export function constructExample(id: string): JsonObject {
  const construct = catalogue.find((entry) => entry.id === id);
  if (!construct) throw new Error(`no construct ${id} in the catalogue`);
  return exampleSpec(construct.example);
}
