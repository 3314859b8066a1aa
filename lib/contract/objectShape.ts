// What an object schema reads, with its branches: a property is read when the schema or any of its allOf, anyOf or
// oneOf branches declares it, so a rename by an anyOf of whole objects still reads the old name in one branch.
import { isObject, type Json, type JsonObject } from '../openapi/dereference.js';
import { pointerStep } from './text.js';

export interface ObjectShape {
  /** Every property some branch declares: its schema and the pointer steps to it, from the first branch that does. */
  properties: Map<string, { schema: Json; steps: string }>;
  /** The properties every value must carry: the schema's own, any allOf member's, and those every branch requires. */
  required: Set<string>;
  /** Whether a property no branch declares is refused: the schema or an allOf member is closed, or every branch is. */
  closed: boolean;
}

const empty = (): ObjectShape => ({ properties: new Map(), required: new Set(), closed: false });

function branchesOf(schema: JsonObject, keyword: string): JsonObject[] {
  const branches = schema[keyword];
  return Array.isArray(branches) ? branches.filter(isObject) : [];
}

/** The shape of `schema`; `visiting` stops a branch that leads back to itself. */
export function objectShape(schema: JsonObject, visiting = new Set<JsonObject>()): ObjectShape {
  if (visiting.has(schema)) return empty();
  visiting.add(schema);
  const shape = empty();
  const own = isObject(schema['properties']) ? schema['properties'] : {};
  for (const [name, property] of Object.entries(own))
    shape.properties.set(name, { schema: property, steps: `${pointerStep('properties')}${pointerStep(name)}` });
  if (Array.isArray(schema['required'])) for (const name of schema['required']) shape.required.add(String(name));
  shape.closed = schema['additionalProperties'] === false;
  const adopt = (keyword: string, index: number, branch: ObjectShape) => {
    for (const [name, { schema: property, steps }] of branch.properties)
      if (!shape.properties.has(name))
        shape.properties.set(name, { schema: property, steps: `${pointerStep(keyword)}${pointerStep(index)}${steps}` });
  };
  branchesOf(schema, 'allOf').forEach((member, index) => {
    const branch = objectShape(member, visiting);
    adopt('allOf', index, branch);
    for (const name of branch.required) shape.required.add(name);
    shape.closed ||= branch.closed;
  });
  for (const keyword of ['anyOf', 'oneOf']) {
    const branches = branchesOf(schema, keyword).map((branch) => objectShape(branch, visiting));
    if (branches.length === 0) continue;
    branches.forEach((branch, index) => {
      adopt(keyword, index, branch);
    });
    const [first, ...rest] = branches;
    for (const name of first!.required) if (rest.every((branch) => branch.required.has(name))) shape.required.add(name);
    shape.closed ||= branches.every((branch) => branch.closed);
  }
  visiting.delete(schema);
  return shape;
}
