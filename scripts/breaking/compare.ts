/**
 * Our own breaking-change rules for two OpenAPI 3.1 documents. They cover what
 * optic lets through (a narrowed maximum, maxLength or minimum, a new required
 * parameter, an enum value taken out of a request) and report the rest we
 * know of too, so the check does not depend on optic's coverage.
 *
 * The principle: every request the old contract accepted must still be
 * accepted, and every response the new contract allows must have been allowed
 * before. A response schema is therefore compared with the roles swapped.
 */

import { dereference, isObject, same, type Json, type JsonObject } from '../../lib/openapi/dereference.js';
import { httpMethods as methods } from '../../src/openapi/document.js';
import { reviewedPatternChange } from './reviewedPatterns.js';

export type { JsonObject } from '../../lib/openapi/dereference.js';

export interface BreakingChange {
  /** Where: "POST /pets request body .name", "GET /pets query parameter limit", ... */
  where: string;
  what: string;
}

const compositionKeywords = ['oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else'];

type Direction = 'request' | 'response';

function typesOf(schema: JsonObject): string[] | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((item): item is string => typeof item === 'string');
  return undefined;
}

const lowerBounds = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'] as const;
const upperBounds = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'] as const;

/**
 * Reports what `wider` accepted that `narrower` rejects. For a request,
 * wider is the old schema; for a response, the new one.
 */
function narrowing(
  wider: Json | undefined,
  narrower: Json | undefined,
  where: string,
  direction: Direction,
  out: BreakingChange[],
): void {
  if (!isObject(wider) || !isObject(narrower)) {
    if (!same(wider, narrower) && narrower !== undefined && narrower !== true) {
      out.push({ where, what: 'schema changed in a way this check does not analyse' });
    }
    return;
  }
  const report = (what: string) => out.push({ where, what });
  const verb = direction === 'request' ? 'narrowed' : 'widened';
  // Messages read old -> new whichever schema plays the wider part.
  const change = (wide: unknown, narrow: unknown) =>
    direction === 'request' ? `${String(wide)} -> ${String(narrow)}` : `${String(narrow)} -> ${String(wide)}`;

  for (const keyword of compositionKeywords) {
    if (!same(wider[keyword], narrower[keyword]))
      report(`${keyword} changed; this check does not analyse composition, review it by hand`);
  }

  const wideTypes = typesOf(wider);
  const narrowTypes = typesOf(narrower);
  if (narrowTypes) {
    const accepted = (type: string) =>
      narrowTypes.includes(type) || (type === 'integer' && narrowTypes.includes('number'));
    const lost = wideTypes ? wideTypes.filter((type) => !accepted(type)) : ['any type'];
    if (lost.length > 0)
      report(`type ${verb}: ${change(JSON.stringify(wideTypes ?? 'any'), JSON.stringify(narrowTypes))}`);
  }

  const narrowEnum = narrower['enum'];
  if (Array.isArray(narrowEnum)) {
    const wideEnum = wider['enum'];
    if (!Array.isArray(wideEnum)) {
      report(`enum ${direction === 'request' ? 'added' : 'removed'}: ${JSON.stringify(narrowEnum)}`);
    } else {
      const missing = wideEnum.filter((value) => !narrowEnum.some((other) => same(value, other)));
      if (missing.length > 0) {
        report(
          direction === 'request'
            ? `enum value(s) removed: ${JSON.stringify(missing)}`
            : `enum value(s) added: ${JSON.stringify(missing)}`,
        );
      }
    }
  }
  if ('const' in narrower && !same(wider['const'], narrower['const'])) report(`const ${verb}`);

  // A reviewed change of a string's pattern covers the lengths it names with it.
  const [oldSchema, newSchema] = direction === 'request' ? [wider, narrower] : [narrower, wider];
  const reviewed = reviewedPatternChange(oldSchema, newSchema) !== undefined;
  const reviewedKeywords = new Set<string>(reviewed ? ['pattern', 'minLength', 'maxLength'] : []);

  for (const keyword of lowerBounds) {
    if (reviewedKeywords.has(keyword)) continue;
    const bound = narrower[keyword];
    if (typeof bound !== 'number') continue;
    const previous = wider[keyword];
    if (typeof previous !== 'number' || bound > previous)
      report(`${keyword} ${verb}: ${change(previous ?? 'none', bound)}`);
  }
  for (const keyword of upperBounds) {
    if (reviewedKeywords.has(keyword)) continue;
    const bound = narrower[keyword];
    if (typeof bound !== 'number') continue;
    const previous = wider[keyword];
    if (typeof previous !== 'number' || bound < previous)
      report(`${keyword} ${verb}: ${change(previous ?? 'none', bound)}`);
  }
  for (const keyword of ['pattern', 'format', 'multipleOf'] as const) {
    if (reviewedKeywords.has(keyword)) continue;
    if (narrower[keyword] !== undefined && !same(wider[keyword], narrower[keyword])) {
      report(
        `${keyword} changed: ${change(JSON.stringify(wider[keyword] ?? null), JSON.stringify(narrower[keyword]))}`,
      );
    }
  }

  const wideRequired = Array.isArray(wider['required']) ? wider['required'] : [];
  const narrowRequired = Array.isArray(narrower['required']) ? narrower['required'] : [];
  for (const name of narrowRequired) {
    if (!wideRequired.includes(name)) {
      report(
        direction === 'request'
          ? `field ${String(name)} is newly required`
          : `field ${String(name)} is no longer always present`,
      );
    }
  }

  const wideProperties = isObject(wider['properties']) ? wider['properties'] : {};
  const narrowProperties = isObject(narrower['properties']) ? narrower['properties'] : {};
  const closed = narrower['additionalProperties'] === false;
  if (closed && wider['additionalProperties'] !== false) {
    report(
      direction === 'request'
        ? 'additionalProperties: false added: unknown fields are now rejected'
        : 'additionalProperties: false removed: unknown fields may now appear',
    );
  }
  for (const [name, property] of Object.entries(wideProperties)) {
    const counterpart = narrowProperties[name];
    if (counterpart === undefined) {
      if (closed)
        report(
          direction === 'request' ? `field ${name} removed and unknown fields are rejected` : `field ${name} added`,
        );
      continue;
    }
    narrowing(property, counterpart, `${where}.${name}`, direction, out);
  }
  if (isObject(narrower['additionalProperties']) || isObject(wider['additionalProperties'])) {
    narrowing(
      wider['additionalProperties'] ?? {},
      narrower['additionalProperties'] ?? {},
      `${where}.*`,
      direction,
      out,
    );
  }
  if (wider['items'] !== undefined || narrower['items'] !== undefined) {
    narrowing(wider['items'] ?? {}, narrower['items'] ?? {}, `${where}[]`, direction, out);
  }
}

/** A request schema: every value the old schema accepted must pass the new one. */
function compareRequestSchema(before: Json | undefined, after: Json | undefined, where: string, out: BreakingChange[]) {
  narrowing(before ?? {}, after ?? {}, where, 'request', out);
}

/** A response schema: every value the new schema allows must have been allowed by the old one. */
function compareResponseSchema(
  before: Json | undefined,
  after: Json | undefined,
  where: string,
  out: BreakingChange[],
) {
  narrowing(after ?? {}, before ?? {}, where, 'response', out);
}

interface Operation {
  key: string;
  operation: JsonObject;
  parameters: JsonObject[];
}

function operationsOf(document: JsonObject): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  const paths = isObject(document['paths']) ? document['paths'] : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    const shared = Array.isArray(item['parameters']) ? item['parameters'].filter(isObject) : [];
    for (const method of methods) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const own = Array.isArray(operation['parameters']) ? operation['parameters'].filter(isObject) : [];
      // An operation's own parameter overrides the path item's of the same name and location.
      const byKey = new Map<string, JsonObject>();
      for (const parameter of [...shared, ...own])
        byKey.set(`${String(parameter['in'])} ${String(parameter['name'])}`, parameter);
      // Path templates are compared by shape: /pets/{id} and /pets/{petId} are the same route.
      const key = `${method.toUpperCase()} ${path.replace(/\{[^}]*\}/g, '{}')}`;
      operations.set(key, { key: `${method.toUpperCase()} ${path}`, operation, parameters: [...byKey.values()] });
    }
  }
  return operations;
}

function compareParameters(before: Operation, after: Operation, out: BreakingChange[]) {
  const id = (parameter: JsonObject) => `${String(parameter['in'])} ${String(parameter['name'])}`;
  const old = new Map(before.parameters.map((parameter) => [id(parameter), parameter]));
  for (const parameter of after.parameters) {
    const where = `${after.key} ${String(parameter['in'])} parameter ${String(parameter['name'])}`;
    const previous = old.get(id(parameter));
    if (!previous) {
      if (parameter['required'] === true && parameter['in'] !== 'path')
        out.push({ where, what: 'new required parameter' });
      continue;
    }
    if (parameter['required'] === true && previous['required'] !== true)
      out.push({ where, what: 'parameter became required' });
    compareRequestSchema(previous['schema'], parameter['schema'], where, out);
  }
}

function contentOf(holder: Json | undefined): JsonObject {
  return isObject(holder) && isObject(holder['content']) ? holder['content'] : {};
}

function compareRequestBody(before: Operation, after: Operation, out: BreakingChange[]) {
  const oldBody = before.operation['requestBody'];
  const newBody = after.operation['requestBody'];
  const where = `${after.key} request body`;
  if (!isObject(newBody)) return;
  if (newBody['required'] === true && !(isObject(oldBody) && oldBody['required'] === true)) {
    out.push({ where, what: 'request body became required' });
  }
  if (!isObject(oldBody)) return;
  const newContent = contentOf(newBody);
  for (const [mediaType, media] of Object.entries(contentOf(oldBody))) {
    const counterpart = newContent[mediaType];
    if (!isObject(counterpart)) {
      out.push({ where, what: `media type ${mediaType} no longer accepted` });
      continue;
    }
    compareRequestSchema(
      isObject(media) ? media['schema'] : undefined,
      counterpart['schema'],
      `${where} (${mediaType})`,
      out,
    );
  }
}

function compareResponses(before: Operation, after: Operation, out: BreakingChange[]) {
  const oldResponses = isObject(before.operation['responses']) ? before.operation['responses'] : {};
  const newResponses = isObject(after.operation['responses']) ? after.operation['responses'] : {};
  for (const [status, response] of Object.entries(oldResponses)) {
    const where = `${after.key} response ${status}`;
    const counterpart = newResponses[status];
    if (counterpart === undefined) {
      out.push({ where, what: 'response removed' });
      continue;
    }
    const newContent = contentOf(counterpart);
    for (const [mediaType, media] of Object.entries(contentOf(response))) {
      const next = newContent[mediaType];
      if (!isObject(next)) {
        out.push({ where, what: `media type ${mediaType} removed` });
        continue;
      }
      compareResponseSchema(
        isObject(media) ? media['schema'] : undefined,
        next['schema'],
        `${where} (${mediaType})`,
        out,
      );
    }
  }
}

/** Every change from before to after that can break a client written against before. */
export function findBreakingChanges(before: JsonObject, after: JsonObject): BreakingChange[] {
  const out: BreakingChange[] = [];
  const oldOperations = operationsOf(dereference(before));
  const newOperations = operationsOf(dereference(after));
  for (const [shape, old] of oldOperations) {
    const current = newOperations.get(shape);
    if (!current) {
      out.push({ where: old.key, what: 'operation removed' });
      continue;
    }
    compareParameters(old, current, out);
    compareRequestBody(old, current, out);
    compareResponses(old, current, out);
  }
  return out;
}

/** The major number of a semantic version (info.version). */
export function majorOf(version: unknown): number {
  const match = /^v?(\d+)\./.exec(String(version));
  if (!match?.[1]) throw new Error(`info.version ${JSON.stringify(version)} is not a semantic version`);
  return Number(match[1]);
}
