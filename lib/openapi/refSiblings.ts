// What a $ref with keywords beside it means, as OpenAPI 3.1 says: in a Schema Object (JSON Schema 2020-12) both the
// target and the keywords apply, as ajv validates it, so `{$ref: PetName, maxLength: 200}` admits no name PetName
// refuses; in any other Reference Object only `summary` and `description` replace the target's, the rest is ignored.
import { isObject, same, type Json, type JsonObject } from './json.js';

/** Pointers a Reference Object (not a schema) may name: the non-schema components, and path items. */
const referenceObjectTarget =
  /^#\/(components\/(parameters|responses|requestBodies|headers|examples|links|callbacks|securitySchemes|pathItems)\/[^/]+|paths\/[^/]+)$/;

export const namesSchema = (ref: string) => !referenceObjectTarget.test(ref);

/** Keywords that say something about a value without constraining it: the one written beside the $ref is nearer. */
const annotations = new Set([
  'description',
  'title',
  'summary',
  'example',
  'examples',
  '$comment',
  'externalDocs',
  'xml',
  'default',
  'discriminator',
]);
/** Annotations a reader treats as set when either side sets them. */
const flags = new Set(['deprecated', 'readOnly', 'writeOnly', 'uniqueItems']);
const upperBounds = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains']);
const lowerBounds = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains']);
/** Keywords whose meaning depends on their neighbours in the same object: never split from them. */
const entangled = new Set([
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'unevaluatedItems',
  'contains',
  'if',
  'then',
  'else',
]);

/** A bound as a number or an int64 kept as text; compared exactly when both are whole. */
export function lessThan(a: Json, b: Json): boolean {
  const whole = (value: Json) =>
    (typeof value === 'number' && Number.isSafeInteger(value)) || (typeof value === 'string' && /^-?\d+$/.test(value));
  if (whole(a) && whole(b)) return BigInt(String(a)) < BigInt(String(b));
  return Number(a) < Number(b);
}

const typesOf = (type: Json): string[] => (Array.isArray(type) ? type.map(String) : [String(type)]);

/** The types both allow; an integer is a number, so `number` beside `integer` leaves `integer`. */
function commonTypes(a: Json, b: Json): Json {
  const right = typesOf(b);
  const common = typesOf(a).flatMap((type) => {
    if (right.includes(type)) return [type];
    if (type === 'integer' && right.includes('number')) return [type];
    return type === 'number' && right.includes('integer') ? ['integer'] : [];
  });
  const unique = [...new Set(common)];
  return unique.length === 1 ? unique[0]! : unique;
}

/** One keyword present on both sides as one value, or undefined when no single keyword says both. */
function combined(keyword: string, target: Json, sibling: Json): Json | undefined {
  if (same(target, sibling)) return target;
  if (annotations.has(keyword)) return sibling;
  if (flags.has(keyword)) return target === true || sibling === true;
  if (upperBounds.has(keyword)) return lessThan(sibling, target) ? sibling : target;
  if (lowerBounds.has(keyword)) return lessThan(target, sibling) ? sibling : target;
  if (keyword === 'type') return commonTypes(target, sibling);
  if (keyword === 'required' && Array.isArray(target) && Array.isArray(sibling))
    return [...target, ...sibling.filter((name) => !target.some((other) => same(other, name)))];
  if (keyword === 'enum' && Array.isArray(target) && Array.isArray(sibling))
    return target.filter((value) => sibling.some((other) => same(other, value)));
  if (keyword === 'allOf' && Array.isArray(target) && Array.isArray(sibling)) return [...target, ...sibling];
  return undefined;
}

/**
 * A schema `{$ref, ...siblings}` as one schema that admits exactly what both admit: each keyword written once where
 * one value says both (the lower maximum, the common enum values), every other pair kept apart under `allOf`.
 */
export function applyTogether(target: Json, siblings: JsonObject): Json {
  if (target === true || (isObject(target) && Object.keys(target).length === 0)) return siblings;
  if (!isObject(target)) return target;
  const out: JsonObject = { ...target };
  const apart: JsonObject = {};
  for (const [keyword, value] of Object.entries(siblings)) {
    const previous = target[keyword];
    const one = previous === undefined ? value : combined(keyword, previous, value);
    if (one === undefined) apart[keyword] = value;
    else out[keyword] = one;
  }
  if (Object.keys(apart).length === 0) return out;
  if (Object.keys(apart).some((keyword) => entangled.has(keyword))) {
    // Split, additionalProperties would judge properties it no longer sees: the target and siblings stay whole.
    const asserted = Object.fromEntries(Object.entries(siblings).filter(([keyword]) => !annotations.has(keyword)));
    const noted = Object.fromEntries(Object.entries(siblings).filter(([keyword]) => annotations.has(keyword)));
    return { ...noted, allOf: [target, asserted] };
  }
  const allOf = Array.isArray(out['allOf']) ? out['allOf'] : [];
  return { ...out, allOf: [...allOf, apart] };
}

/** A Reference Object's `summary` and `description` replace the target's; other keywords beside it are ignored. */
export function overrideSummary(target: Json, siblings: JsonObject): Json {
  if (!isObject(target)) return target;
  const kept = Object.entries(siblings).filter(([keyword]) => keyword === 'summary' || keyword === 'description');
  return kept.length === 0 ? target : { ...target, ...Object.fromEntries(kept) };
}
