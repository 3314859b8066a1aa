// What two schemas of one place admit, compared by values: candidates drawn from both schemas (their boundary
// values, their patterns, their enums, each required property left out, extra properties, a value of every other
// type, and a few values drawn at random with a fixed seed) are validated by ajv against each side. A value one side
// accepts and the other refuses is a finding, with the places in the value the refusing side blames.
// The named rules (schemaDiff.ts) explain a change; these findings decide it, whatever keywords it uses.
import type { ErrorObject, ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { createAjv } from '../../src/http/operations/ajv.js';
import { formats } from '../conformance/arbitraries.js';
import { isObject, type Json, type JsonObject } from '../openapi/dereference.js';
import { ContractInputError } from './load.js';

/**
 * Values tried per schema node: a leaf makes about a hundred (every bound ±1 of both sides, an enum, a pattern's
 * samples); an object makes one variant per value of each property, so it grows by the sum, never the product.
 */
const maxValuesPerNode = 600;
/** Values of a nested object or array a property contributes to its parent: taken across all its properties. */
const maxValuesPerProperty = 150;
/** Values validated per place (one parameter, body or header): bounds the time of a place to milliseconds. */
const maxValuesPerPlace = 2500;
/** Values drawn at random per pattern or format, with a fixed seed: the same verdict on every run. */
const drawnPerLeaf = 6;
const seed = 60;
/** Nesting followed when building values; deeper schemas are judged by the values built above that depth. */
const maxDepth = 5;
/** Longest string built, so a bound of 2048 characters is still tried on both sides (2049). */
const maxStringLength = 4200;
/** Longest array built. */
const maxArrayLength = 1000;

/**
 * Whether values can show a change a rule names: a length or count past what is built, or a bound a double cannot
 * hold exactly (an int64 bound, kept as text), is judged by its rule alone.
 */
export function showable(rule: string, before: Json | undefined, after: Json | undefined): boolean {
  const fits = (bound: Json | undefined, most: number) =>
    bound === undefined || (typeof bound === 'number' && Math.abs(bound) < most);
  const limit = /-(min|max)-length-/.test(rule)
    ? maxStringLength
    : /-(min|max)-(items|properties)-/.test(rule)
      ? maxArrayLength
      : /-(min|max|exclusive-min|exclusive-max|multiple-of)-/.test(rule)
        ? Number.MAX_SAFE_INTEGER
        : undefined;
  return limit === undefined || (fits(before, limit) && fits(after, limit));
}

type Schema = JsonObject | boolean;

/**
 * One value one side accepts and the other refuses; `blame`: where in the value the refusing side objects, and
 * `keywords`: the keyword that objects there (one per blame), so a rule on one keyword is shown only by its own.
 */
export interface Finding {
  value: Json;
  blame: string[][];
  keywords: string[];
}

export interface Admitted {
  /** Values the base accepts and the head refuses. */
  narrowing: Finding[];
  /** Values the head accepts and the base refuses. */
  widening: Finding[];
  /** Values both accept: what shows a change that refuses nothing (a field the head no longer reads). */
  accepted: Json[];
}

// Keywords that say nothing about which values are valid, or that ajv does not know (OpenAPI's own).
const annotations = new Set([
  'description',
  'title',
  'example',
  'examples',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
  'externalDocs',
  'xml',
  'discriminator',
  'default',
  'contentMediaType',
  'contentEncoding',
]);
const numericKeywords = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
]);
const schemaMaps = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
const schemaLists = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

/** The schema as ajv reads it: annotations and extensions dropped, int64 bounds (kept as text) as numbers. */
function forValidation(schema: Json): Json {
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (annotations.has(keyword) || keyword.startsWith('x-')) continue;
    // A $ref left by dereferencing closes a cycle: past it both sides admit anything, so the values compare the
    // levels above it (the rules compare the same levels).
    if (keyword === '$ref') continue;
    if (numericKeywords.has(keyword) && typeof value === 'string' && /^-?\d+$/.test(value))
      out[keyword] = Number(value);
    else if (schemaMaps.has(keyword) && isObject(value))
      out[keyword] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, forValidation(sub)]));
    else if (schemaLists.has(keyword) && Array.isArray(value)) out[keyword] = value.map(forValidation);
    else if (
      ['items', 'not', 'if', 'then', 'else', 'additionalProperties', 'propertyNames', 'contains'].includes(keyword)
    )
      out[keyword] = forValidation(value);
    else if (keyword === 'unevaluatedProperties' || keyword === 'unevaluatedItems') out[keyword] = forValidation(value);
    else out[keyword] = value;
  }
  return out;
}

/** The base of a response, opened: a client ignores fields it does not know, so a new one is never refused. */
export function opened(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(opened);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if ((keyword === 'additionalProperties' || keyword === 'unevaluatedProperties') && value === false) continue;
    out[keyword] = keyword === 'enum' || keyword === 'const' ? value : opened(value);
  }
  return out;
}

const ajv = createAjv({ allErrors: true, strictTypes: false, strictRequired: false, strictTuples: false });
const compiled = new Map<string, ValidateFunction>();

/** ajv's validator of a schema, compiled once per text; a schema ajv cannot read is an input error naming where. */
export function validatorOf(schema: Json, where: string): ValidateFunction {
  const prepared = forValidation(schema);
  const key = JSON.stringify(prepared);
  let validate = compiled.get(key);
  if (!validate) {
    try {
      validate = ajv.compile(typeof prepared === 'boolean' ? prepared : (prepared as JsonObject));
    } catch (error) {
      throw new ContractInputError(`${where}: schema cannot be compiled: ${(error as Error).message}`);
    }
    compiled.set(key, validate);
  }
  return validate;
}

/** Where an error points in the value: its instance path, plus the property it names. */
function blameOf(error: ErrorObject): string[] {
  const steps = error.instancePath
    .split('/')
    .slice(1)
    .map((step) => step.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as Record<string, unknown>;
  for (const key of ['missingProperty', 'additionalProperty', 'unevaluatedProperty', 'propertyName'])
    if (typeof params[key] === 'string') return [...steps, params[key]];
  return steps;
}

/** What both schemas mention: numbers, strings, lengths and property names, tried on every node. */
interface Hints {
  numbers: Set<number>;
  lengths: Set<number>;
  strings: Set<string>;
}

function collectHints(schema: Json, hints: Hints): void {
  if (Array.isArray(schema)) {
    for (const item of schema) collectHints(item, hints);
    return;
  }
  if (!isObject(schema)) return;
  for (const [keyword, value] of Object.entries(schema)) {
    if (annotations.has(keyword) || keyword.startsWith('x-')) continue;
    const number = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
    if (['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'].includes(keyword))
      if (typeof number === 'number') hints.numbers.add(number);
    if (['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'].includes(keyword))
      if (typeof number === 'number') hints.lengths.add(number);
    if (keyword === 'enum' || keyword === 'const') {
      for (const item of Array.isArray(value) ? value : [value]) {
        if (typeof item === 'string') hints.strings.add(item);
        if (typeof item === 'number') hints.numbers.add(item);
      }
      continue;
    }
    if (keyword === 'format' && value === 'int32') [-2147483648, 2147483647].forEach((n) => hints.numbers.add(n));
    if (
      (keyword === 'properties' || keyword === 'dependentRequired' || keyword === 'dependentSchemas') &&
      isObject(value)
    )
      Object.keys(value).forEach((name) => hints.strings.add(name));
    if (keyword === 'required' && Array.isArray(value))
      value.forEach((name) => typeof name === 'string' && hints.strings.add(name));
    collectHints(value, hints);
  }
}

const keyOf = (value: Json) => JSON.stringify(value);

function unique(values: Json[], cap: number): Json[] {
  const seen = new Set<string>();
  const out: Json[] = [];
  for (const value of values) {
    const key = keyOf(value);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(value);
    if (out.length >= cap) break;
  }
  return out;
}

const compositionKeywords = ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else'];

/** Two schemas as one, for building values (never for judging): properties merged, required joined. */
function merge(...schemas: Json[]): JsonObject {
  const out: JsonObject = {};
  for (const schema of schemas) {
    if (!isObject(schema)) continue;
    for (const [keyword, value] of Object.entries(schema)) {
      const previous = out[keyword];
      if (keyword === 'properties' && isObject(previous) && isObject(value)) out[keyword] = { ...previous, ...value };
      else if (keyword === 'required' && Array.isArray(previous) && Array.isArray(value))
        out[keyword] = [...new Set([...previous, ...value])];
      else out[keyword] = value;
    }
  }
  return out;
}

/** The schema's shapes without composition: the node itself, and the node with each branch it may take. */
function shapesOf(schema: JsonObject): JsonObject[] {
  const core = Object.fromEntries(Object.entries(schema).filter(([keyword]) => !compositionKeywords.includes(keyword)));
  const shapes: JsonObject[] = [];
  const allOf = Array.isArray(schema['allOf']) ? schema['allOf'] : [];
  const withAll = merge(core, ...allOf.flatMap((branch) => (isObject(branch) ? [branch] : [])));
  for (const keyword of ['anyOf', 'oneOf']) {
    const branches = schema[keyword];
    if (Array.isArray(branches)) for (const branch of branches) shapes.push(merge(withAll, branch));
  }
  if (isObject(schema['if'])) {
    shapes.push(merge(withAll, schema['if'], schema['then'] ?? {}));
    shapes.push(merge(withAll, schema['else'] ?? {}));
  }
  if (isObject(schema['not'])) shapes.push(merge(withAll, schema['not']));
  shapes.unshift(withAll);
  // A shape may itself hold composition (a branch with its own anyOf): one level more.
  return shapes.flatMap((shape) =>
    compositionKeywords.some((keyword) => keyword in shape && keyword !== 'not')
      ? shapesOf(shape).slice(0, 8)
      : [shape],
  );
}

function typesOf(schema: JsonObject): string[] {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((item): item is string => typeof item === 'string');
  const inferred: string[] = [];
  if ('properties' in schema || 'required' in schema || 'propertyNames' in schema || 'additionalProperties' in schema)
    inferred.push('object');
  if ('items' in schema || 'prefixItems' in schema || 'minItems' in schema || 'maxItems' in schema)
    inferred.push('array');
  if ('pattern' in schema || 'minLength' in schema || 'maxLength' in schema || 'format' in schema)
    inferred.push('string');
  if ('minimum' in schema || 'maximum' in schema || 'exclusiveMinimum' in schema || 'multipleOf' in schema)
    inferred.push('number');
  return inferred.length > 0 ? inferred : ['object', 'string', 'integer'];
}

/**
 * Texts patterns disagree on: spaces, a final line feed, C0 and C1 controls, an unpaired surrogate (which a JSON
 * string can hold), characters outside ASCII and the BMP, punctuation identifiers often refuse.
 */
const edgeStrings = [
  'a',
  'Rex',
  ' ',
  '',
  '0',
  '_',
  '-',
  '.',
  'é',
  '😀',
  '\n',
  'a\n',
  '\t',
  '\u007f',
  '\u0085',
  '\ud800',
  'a\udc00',
];

/** Tried first, so a counter-example reads like data a person would send. */
const readable = ['Rex', 'a'];

/** A value of every JSON type: a type changed or made nullable shows on one of them. */
const everyType: Json[] = [null, true, 0, 1.5, 'x', {}, []];

const drawn = <T>(arbitrary: fc.Arbitrary<T>): T[] => {
  try {
    return fc.sample(arbitrary, { seed, numRuns: drawnPerLeaf });
  } catch {
    return [];
  }
};

const numberOf = (value: Json | undefined) =>
  typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : undefined;

class Values {
  constructor(private readonly hints: Hints) {}

  of(schema: Json | undefined, depth = 0): Json[] {
    if (schema === undefined || schema === true) return everyType;
    if (!isObject(schema)) return everyType;
    const values: Json[] = [];
    for (const shape of shapesOf(schema)) values.push(...this.plain(shape, depth));
    values.push(...everyType);
    return unique(values, maxValuesPerNode);
  }

  private plain(schema: JsonObject, depth: number): Json[] {
    const values: Json[] = [];
    if ('const' in schema) values.push(schema['const'] ?? null);
    if (Array.isArray(schema['enum'])) values.push(...schema['enum']);
    for (const type of typesOf(schema)) {
      if (type === 'integer' || type === 'number') values.push(...this.numbers(schema, type === 'integer'));
      else if (type === 'string') values.push(...this.strings(schema));
      else if (type === 'boolean') values.push(true, false);
      else if (type === 'null') values.push(null);
      else if (type === 'array' && depth < maxDepth) values.push(...this.arrays(schema, depth));
      else if (type === 'object' && depth < maxDepth) values.push(...this.objects(schema, depth));
    }
    return values;
  }

  private numbers(schema: JsonObject, integer: boolean): number[] {
    const points = new Set<number>([0, 1, -1, ...this.hints.numbers]);
    for (const keyword of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) {
      const bound = numberOf(schema[keyword]);
      if (bound !== undefined) points.add(bound);
    }
    const out: number[] = [];
    const step = (value: number) => Math.max(1, Number.isSafeInteger(value) ? 1 : Math.abs(value) * Number.EPSILON * 2);
    for (const point of points) {
      const around = [point, point - step(point), point + step(point), Math.floor(point), Math.ceil(point)];
      if (!integer) around.push(point - 0.5, point + 0.5);
      out.push(...around.filter((value) => Number.isFinite(value) && (!integer || Number.isInteger(value))));
    }
    const min = numberOf(schema['minimum']) ?? numberOf(schema['exclusiveMinimum']) ?? -1000;
    const max = numberOf(schema['maximum']) ?? numberOf(schema['exclusiveMaximum']) ?? 1000;
    if (min <= max && Number.isSafeInteger(Math.ceil(min)) && Number.isSafeInteger(Math.floor(max)))
      out.push(...drawn(fc.integer({ min: Math.ceil(min), max: Math.floor(max) })));
    const multiple = numberOf(schema['multipleOf']);
    if (multiple !== undefined) out.push(multiple * 3, multiple * 3 + multiple / 2);
    return out;
  }

  private strings(schema: JsonObject): string[] {
    const samples: string[] = [];
    const pattern = typeof schema['pattern'] === 'string' ? schema['pattern'] : undefined;
    if (pattern !== undefined) {
      try {
        samples.push(...drawn(fc.stringMatching(new RegExp(pattern, 'u'))));
      } catch {
        // A pattern fast-check cannot draw from is judged by the other values.
      }
    }
    const format = typeof schema['format'] === 'string' ? formats[schema['format']] : undefined;
    if (format) samples.push(...drawn(format));
    samples.unshift(...readable);
    samples.push(...edgeStrings);
    samples.push(...this.hints.strings);
    const lengths = new Set<number>([
      0,
      1,
      2,
      ...[...this.hints.lengths].flatMap((length) => [length - 1, length, length + 1]),
    ]);
    for (const keyword of ['minLength', 'maxLength']) {
      const bound = numberOf(schema[keyword]);
      if (bound !== undefined) [bound - 1, bound, bound + 1].forEach((length) => lengths.add(length));
    }
    const sized: string[] = [];
    const seedText = samples.find((text) => text.length > 0 && (!pattern || safeTest(pattern, text))) ?? 'a';
    for (const length of [...lengths].sort((a, b) => a - b)) {
      if (length < 0 || length > maxStringLength) continue;
      sized.push(resize(seedText, length), 'a'.repeat(length), ' '.repeat(length));
    }
    return [...samples.slice(0, drawnPerLeaf * 2), ...sized, ...samples.slice(drawnPerLeaf * 2)];
  }

  private arrays(schema: JsonObject, depth: number): Json[] {
    const every = this.of(schema['items'], depth + 1);
    const items = every.slice(0, 8);
    const first = items[0] ?? null;
    const out: Json[] = [[], ...every.map((item) => [item])];
    const lengths = new Set<number>([
      2,
      ...[...this.hints.lengths].flatMap((length) => [length - 1, length, length + 1]),
    ]);
    for (const keyword of ['minItems', 'maxItems']) {
      const bound = numberOf(schema[keyword]);
      if (bound !== undefined) [bound - 1, bound, bound + 1].forEach((length) => lengths.add(length));
    }
    for (const length of lengths) {
      if (length < 0 || length > maxArrayLength) continue;
      out.push(Array.from({ length }, () => first));
      out.push(
        Array.from({ length }, (_, index) =>
          typeof first === 'number' ? first + index : (items[index % items.length] ?? first),
        ),
      );
    }
    return out;
  }

  private objects(schema: JsonObject, depth: number): Json[] {
    const properties = isObject(schema['properties']) ? schema['properties'] : {};
    const required = new Set(Array.isArray(schema['required']) ? schema['required'].map(String) : []);
    const names = [...new Set([...Object.keys(properties), ...required])];
    const choices = new Map<string, Json[]>();
    const skeleton: JsonObject = {};
    for (const name of names) {
      const candidates = this.of(properties[name], depth + 1).slice(0, maxValuesPerProperty);
      choices.set(name, candidates);
      const validate = properties[name] === undefined ? undefined : validatorOf(properties[name], name);
      skeleton[name] = candidates.find((value) => validate === undefined || validate(value)) ?? candidates[0] ?? null;
    }
    const minimal = Object.fromEntries(Object.entries(skeleton).filter(([name]) => required.has(name)));
    const out: Json[] = [skeleton, minimal];
    for (const name of names) {
      out.push(without(skeleton, name), { ...minimal, [name]: skeleton[name] ?? null });
      if (required.has(name)) out.push(without(minimal, name));
    }
    for (const extra of ['extra', ...this.hints.strings].filter((name) => !(name in skeleton)).slice(0, 12))
      out.push(withKey(skeleton, extra, 'x'), withKey(minimal, extra, 1));
    // One property changed at a time, the properties taken in turn: a parent that keeps the first values of this
    // object still sees each property's first values.
    const variants = names.map((name) => (choices.get(name) ?? []).map((value) => ({ ...skeleton, [name]: value })));
    for (let index = 0; variants.some((list) => index < list.length); index += 1)
      for (const list of variants) if (index < list.length) out.push(list[index]!);
    return out;
  }
}

function safeTest(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, 'u').test(text);
  } catch {
    return false;
  }
}

/** The text repeated or cut to `length` code points. */
function resize(text: string, length: number): string {
  const points = [...text];
  if (points.length === 0) return 'a'.repeat(length);
  const out: string[] = [];
  while (out.length < length) out.push(...points);
  return out.slice(0, length).join('');
}

const without = (object: JsonObject, name: string) =>
  Object.fromEntries(Object.entries(object).filter(([key]) => key !== name));

/** A copy with one more key, __proto__ included as a real key. */
function withKey(object: JsonObject, name: string, value: Json): JsonObject {
  const copy: JsonObject = { ...object };
  Object.defineProperty(copy, name, { value, enumerable: true, configurable: true, writable: true });
  return copy;
}

/** Interleaved, so each side's values get their share of the place's bound. */
function interleave(a: Json[], b: Json[]): Json[] {
  const out: Json[] = [];
  for (let index = 0; index < Math.max(a.length, b.length); index += 1) {
    if (index < a.length) out.push(a[index]!);
    if (index < b.length) out.push(b[index]!);
  }
  return out;
}

/**
 * The values of one place that the base and the head judge differently. `judged` are the schemas each side is
 * judged by (a response's base opened), `where` names the place for an input error.
 */
export function compareAdmitted(
  base: Json | undefined,
  head: Json | undefined,
  where: string,
  judged: { base: Json | undefined; head: Json | undefined } = { base, head },
): Admitted {
  const hints: Hints = { numbers: new Set(), lengths: new Set(), strings: new Set() };
  collectHints(base ?? {}, hints);
  collectHints(head ?? {}, hints);
  const values = new Values(hints);
  const candidates = unique(
    interleave(values.of(base as Schema as Json), values.of(head as Schema as Json)),
    maxValuesPerPlace,
  );
  const validateBase = validatorOf(judged.base ?? true, `${where} (base)`);
  const validateHead = validatorOf(judged.head ?? true, `${where} (head)`);
  const result: Admitted = { narrowing: [], widening: [], accepted: [] };
  for (const value of candidates.filter(exact)) {
    const baseAccepts = validateBase(value);
    const baseErrors = validateBase.errors ?? [];
    const headAccepts = validateHead(value);
    const headErrors = validateHead.errors ?? [];
    const finding = (errors: ErrorObject[]) => ({
      value,
      blame: errors.map(blameOf),
      keywords: errors.map((error) => error.keyword),
    });
    if (baseAccepts && !headAccepts) result.narrowing.push(finding(headErrors));
    if (headAccepts && !baseAccepts) result.widening.push(finding(baseErrors));
    if (baseAccepts && headAccepts) result.accepted.push(value);
  }
  return result;
}

/**
 * Whether every number in the value is what it says: an integer past 2^53 is a double rounded from an int64 bound
 * (9223372036854775807 reads as 2^63, no int64 at all), so it shows no bound; such bounds are judged by rule.
 */
function exact(value: Json): boolean {
  if (typeof value === 'number') return !Number.isInteger(value) || Number.isSafeInteger(value);
  if (Array.isArray(value)) return value.every(exact);
  return isObject(value) ? Object.values(value).every(exact) : true;
}

/** Whether `path` (with `*` for any item or property) is `blame` or holds it. */
export const holds = (path: string[], blame: string[]) =>
  path.length <= blame.length && path.every((step, index) => step === '*' || step === blame[index]);

/** The part of a value at a path (the first item or property where the path says `*`). */
export function valueAt(value: Json, path: string[]): Json | undefined {
  let node: Json | undefined = value;
  for (const step of path) {
    if (Array.isArray(node)) node = step === '*' ? node[0] : node[Number(step)];
    else if (isObject(node)) node = step === '*' ? Object.values(node)[0] : node[step];
    else return undefined;
  }
  return node;
}
