import fc from 'fast-check';
import { createAjv } from '../../src/http/operations/ajv.js';
import type { Schema } from './spec.js';

/**
 * Values from the subset of JSON Schema that openapi.yaml uses: type, enum,
 * minimum/maximum, minLength/maxLength, pattern, format (those of
 * `formats` below), required, properties, additionalProperties: false,
 * minProperties, items/maxItems, anyOf ($refs are resolved before). A keyword
 * outside that subset throws, so the suite cannot silently generate values
 * the schema does not describe.
 *
 * Valid values are also values PostgreSQL can store: dates from year 0001
 * to 9999 and offsets within ±15:59 (the service's formats refuse the
 * rest, src/http/operations/ajv.ts), integers within int8
 * (and within 2^53 - 1, where JavaScript numbers are exact), no U+0000 in
 * a string (PostgreSQL's text refuses it).
 */

const supported = new Set([
  'type',
  'enum',
  'const',
  'format',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minProperties',
  'anyOf',
  'default',
  'description',
  'examples',
]);

function assertSupported(schema: Schema): void {
  for (const keyword of Object.keys(schema)) {
    if (!supported.has(keyword))
      throw new Error(`schema keyword ${keyword} is not supported by the conformance generator`);
  }
}

/** JSON Schema lengths count code points, not UTF-16 units. */
export const codePoints = (text: string) => [...text].length;

const regexOf = (schema: Schema) =>
  typeof schema['pattern'] === 'string' ? new RegExp(schema['pattern'], 'u') : undefined;

function stringBounds(schema: Schema): { min: number; max: number } {
  return { min: Number(schema['minLength'] ?? 0), max: Number(schema['maxLength'] ?? 200) };
}

function fitsString(schema: Schema, text: string): boolean {
  const { min, max } = stringBounds(schema);
  const length = codePoints(text);
  const pattern = regexOf(schema);
  return length >= min && length <= max && (!pattern || pattern.test(text));
}

// The code points a string unit of 'binary' draws from: all but the surrogates.
const surrogatesStart = 0xd800;
const surrogatesCount = 0x800;
const lastCodePoint = 0x10ffff;

/**
 * One code point of any plane: the values, distribution and shrinking of
 * fc.string's unit 'binary' (index i of [0, 0xD7FF] then [0xE000, 0x10FFFF]),
 * with an unmapper that computes the index. fast-check's own unit builds a
 * map of all 1.1 million code points the first time it unmaps a value, 1 s
 * of CPU in every test process that makes such a string.
 */
export const anyCodePoint: fc.Arbitrary<string> = fc.nat({ max: lastCodePoint - surrogatesCount }).map(
  (index) => String.fromCodePoint(index < surrogatesStart ? index : index + surrogatesCount),
  (value) => {
    const point = typeof value === 'string' ? value.codePointAt(0) : undefined;
    if (
      point === undefined ||
      String.fromCodePoint(point) !== value ||
      (point >= surrogatesStart && point < surrogatesStart + surrogatesCount)
    )
      throw new Error('not a single code point outside the surrogates');
    return point < surrogatesStart ? point : point - surrogatesCount;
  },
);

/** Cuts to max code points, never through a surrogate pair. */
const cut = (text: string, max: number) => [...text].slice(0, max).join('');

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/** A calendar day of years 0001 to 9999 (every year PostgreSQL's date and timestamp read as written). */
const storableDay = fc
  .record({ year: fc.integer({ min: 1, max: 9999 }), month: fc.integer({ min: 1, max: 12 }), day: fc.nat() })
  .map(({ year, month, day }) => {
    const days = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeapYear(year) ? 1 : 0);
    return `${pad(year, 4)}-${pad(month, 2)}-${pad((day % days) + 1, 2)}`;
  });

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const timeOfDay = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }))
  .map(([hour, minute, second]) => `${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}`);
const fraction = fc.option(
  fc.integer({ min: 0, max: 999_999 }).map((micros) => `.${pad(micros, 6)}`),
  {
    nil: '',
  },
);
const offset = fc.oneof(
  fc.constantFrom('Z', 'z', '+00:00'),
  fc
    .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 59 }))
    .map(([sign, hours, minutes]) => `${sign}${pad(hours, 2)}:${pad(minutes, 2)}`),
);

const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/);

/** Each format's arbitrary, built on first use (see `formats`). */
function builtOnFirstUse(
  makers: Record<string, () => fc.Arbitrary<string>>,
): Readonly<Record<string, fc.Arbitrary<string>>> {
  const built: Record<string, fc.Arbitrary<string>> = {};
  for (const [name, make] of Object.entries(makers))
    Object.defineProperty(built, name, {
      enumerable: true,
      configurable: true,
      get: () => {
        const arbitrary = make();
        Object.defineProperty(built, name, { enumerable: true, value: arbitrary });
        return arbitrary;
      },
    });
  return built;
}

/**
 * Valid values of each format the generator knows: what the service's ajv
 * (ajv-formats, full mode; src/http/operations/ajv.ts) accepts and
 * PostgreSQL stores. test/contract/formats.test.ts holds the two to agreeing.
 * Each is built when first read: fc.webUrl alone took 1.2 s of CPU to build,
 * in every process that imported this module (the contract commands among
 * them), for a format openapi.yaml does not use.
 */
export const formats = builtOnFirstUse({
  date: () => storableDay,
  'date-time': () =>
    fc.tuple(storableDay, fc.constantFrom('T', 't'), timeOfDay, fraction, offset).map((parts) => parts.join('')),
  email: () =>
    fc
      .tuple(
        fc.stringMatching(/^[a-z0-9_+-]{1,12}(?:\.[a-z0-9_+-]{1,8})?$/),
        fc.array(label, { minLength: 1, maxLength: 3 }),
      )
      .map(([local, labels]) => `${local}@${[...labels, 'example'].join('.')}`),
  uuid: () => fc.uuid(),
  uri: () => fc.webUrl({ withQueryParameters: true, withFragments: true }),
});

/** Strings that break a format (and that PostgreSQL would refuse, where it can tell): year 0000 first. */
const formatBreakers: Record<string, readonly string[]> = {
  date: [
    '0000-01-01',
    '0000-12-31',
    '10000-01-01',
    '2024-02-30',
    '2023-02-29',
    '2024-13-01',
    '2024-1-1',
    '2024-01-01T00:00:00Z',
    '',
  ],
  'date-time': [
    '0000-01-01T00:00:00Z',
    '2024-01-01T00:00:00+16:00',
    '2024-01-01T00:00:00-23:59',
    '10000-01-01T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:00:00',
    '2024-01-01',
    '',
  ],
  email: ['', 'plain', '@example.com', 'a@', 'a b@example.com', 'a@@example.com'],
  uuid: [
    '',
    '0',
    '123e4567-e89b-12d3-a456-42661417400',
    '123e4567e89b12d3a456426614174000x',
    'g23e4567-e89b-12d3-a456-426614174000',
  ],
  uri: ['', 'example.com', '/relative/path', 'http://exa mple.com/', '://no-scheme'],
};

const formatCheckers = new Map<string, (text: string) => boolean>();

/**
 * Whether the service's ajv (built on first use) takes text as the schema's
 * format: a value meant to break the format must not.
 */
export function meetsFormat(schema: Schema, text: string): boolean {
  const name = String(schema['format']);
  let check = formatCheckers.get(name);
  if (!check) {
    const validate = createAjv().compile({ type: 'string', format: name });
    check = (value: string) => validate(value);
    formatCheckers.set(name, check);
  }
  return check(text);
}

function formatOf(schema: Schema): fc.Arbitrary<string> | undefined {
  const name = schema['format'];
  if (typeof name !== 'string') return undefined;
  const values = formats[name];
  if (!values) throw new Error(`format ${name} is not supported by the conformance generator`);
  return values;
}

/** Any text of any plane but U+0000, which no PostgreSQL text can hold. */
const storableCodePoint = anyCodePoint.filter((char) => char !== '\u0000');

function validString(schema: Schema): fc.Arbitrary<string> {
  const { min, max } = stringBounds(schema);
  const pattern = regexOf(schema);
  const formatted = formatOf(schema);
  if (formatted) return formatted.filter((text) => fitsString(schema, text));
  const anyText = fc.string({ unit: storableCodePoint, minLength: min, maxLength: Math.min(max, 120) });
  if (!pattern) return anyText.filter((text) => fitsString(schema, text));
  // stringMatching stays near ASCII; full-Unicode text is added when enough
  // of it happens to match the pattern (a negated class such as the name's).
  const matching = fc
    .stringMatching(pattern)
    .map((text) => cut(text, max))
    .filter((text) => fitsString(schema, text));
  const sample = fc.sample(anyText, { numRuns: 200, seed: 1 });
  const acceptance = sample.filter((text) => fitsString(schema, text)).length / sample.length;
  return acceptance > 0.2
    ? fc.oneof(
        matching,
        anyText.filter((text) => fitsString(schema, text)),
      )
    : matching;
}

function validInteger(schema: Schema): fc.Arbitrary<number> {
  // Bounds beyond 2^53 - 1 (int64's) are not exact as JavaScript numbers,
  // and neither is their text: values are drawn where they are.
  const min = Math.max(Number(schema['minimum'] ?? Number.MIN_SAFE_INTEGER), Number.MIN_SAFE_INTEGER);
  const max = Math.min(Number(schema['maximum'] ?? Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
  // Mostly small values (ids that exist, limits people use), and the edges.
  return fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min, max: Math.min(max, min + 200) }) },
    { weight: 1, arbitrary: fc.constantFrom(min, max) },
    { weight: 1, arbitrary: fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number) },
  );
}

const acceptors = new WeakMap<Schema, (value: unknown) => boolean>();

/** Whether the service's ajv takes value as the schema's (each schema compiled once). */
function accepts(schema: Schema, value: unknown): boolean {
  let check = acceptors.get(schema);
  if (!check) {
    const validate = createAjv().compile(schema);
    check = (candidate: unknown) => validate(candidate);
    acceptors.set(schema, check);
  }
  return check(value);
}

/**
 * The branches of an `anyOf`, each with the keywords beside it (an object's properties, its own required
 * fields) applied too: the value a branch describes is one of the whole schema's.
 */
function anyOfBranches(schema: Schema): Schema[] {
  const { anyOf, ...beside } = schema;
  return (anyOf as Schema[]).map((branch) => {
    const properties = { ...((beside['properties'] ?? {}) as Schema), ...((branch['properties'] ?? {}) as Schema) };
    const required = [
      ...new Set([...((beside['required'] ?? []) as string[]), ...((branch['required'] ?? []) as string[])]),
    ];
    return {
      ...beside,
      ...branch,
      ...(Object.keys(properties).length > 0 ? { properties } : {}),
      ...(required.length > 0 ? { required } : {}),
    } as Schema;
  });
}

/** Values the schema accepts. */
export function valid(schema: Schema): fc.Arbitrary<unknown> {
  assertSupported(schema);
  // A value of one branch, checked against the whole schema (a branch may say what another part refuses).
  if (Array.isArray(schema['anyOf']))
    return fc.oneof(...anyOfBranches(schema).map(valid)).filter((value) => accepts(schema, value));
  if (Array.isArray(schema['enum'])) return fc.constantFrom(...schema['enum']);
  if ('const' in schema) return fc.constant(schema['const']);
  switch (schema['type']) {
    case 'string':
      return validString(schema);
    case 'integer':
      return validInteger(schema);
    case 'number':
      return fc.double({ min: Number(schema['minimum'] ?? -1e9), max: Number(schema['maximum'] ?? 1e9), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valid(schema['items'] as Schema), {
        minLength: Number(schema['minItems'] ?? 0),
        maxLength: Math.min(Number(schema['maxItems'] ?? 5), 5),
      });
    case 'object': {
      const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
      const model = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, valid(property)]));
      const minProperties = Number(schema['minProperties'] ?? 0);
      return fc
        .record(model, { requiredKeys: (schema['required'] as string[] | undefined) ?? [] })
        .filter((object) => Object.keys(object).length >= minProperties);
    }
    default:
      throw new Error(`cannot generate a value for schema type ${JSON.stringify(schema['type'])}`);
  }
}

/** One way to break a schema: what it breaks, and values that break it and only it. */
export interface Violation {
  rule: string;
  values: fc.Arbitrary<unknown>;
}

// Characters tried against a pattern; those the pattern refuses make values that break it.
const patternBreakers = [
  '\u0000',
  '\u0007',
  '\n',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u009f',
  ' ',
  '/',
  '%',
  '+',
  '=',
  '.',
  '~',
  'é',
  '😀',
];

const otherJsonTypes: Record<string, fc.Arbitrary<unknown>> = {
  string: fc.string({ maxLength: 10 }),
  integer: fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constant(0)),
  number: fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Number.isInteger(value)),
  boolean: fc.boolean(),
  null: fc.constant(null),
  object: fc.constant({}),
  array: fc.array(fc.integer(), { maxLength: 2 }),
};

/** Values of the wrong JSON type; an integer schema also refuses fractions. */
function wrongTypes(type: string): fc.Arbitrary<unknown> {
  const others = Object.entries(otherJsonTypes)
    .filter(([name]) => name !== type && !(type === 'number' && name === 'integer'))
    .map(([, arbitrary]) => arbitrary);
  return fc.oneof(...others);
}

/**
 * Values an `anyOf` refuses: each branch's violations that no branch accepts (a value that breaks one branch
 * may be another's), kept where a sample shows it makes such values often enough to draw from.
 */
function anyOfViolations(schema: Schema): Violation[] {
  const refused = (value: unknown) => !accepts(schema, value);
  return anyOfBranches(schema).flatMap((branch, index) =>
    (branch['type'] === 'object' ? objectViolations(branch) : scalarViolations(branch))
      .filter((violation) => {
        const sample = fc.sample(violation.values, { numRuns: 40, seed: 1 });
        return sample.filter(refused).length >= sample.length / 4;
      })
      .map((violation) => ({
        rule: `anyOf ${index} ${violation.rule}`,
        values: violation.values.filter(refused),
      })),
  );
}

/** Every constraint of a scalar schema, each broken on its own. */
export function scalarViolations(schema: Schema): Violation[] {
  if (Array.isArray(schema['anyOf'])) return anyOfViolations(schema);
  const violations: Violation[] = [];
  const type = schema['type'];
  if (typeof type === 'string') violations.push({ rule: 'type', values: wrongTypes(type) });
  if (Array.isArray(schema['enum'])) {
    const allowed = schema['enum'] as unknown[];
    violations.push({
      rule: 'enum',
      values: fc
        .oneof(fc.string({ maxLength: 12 }), fc.constantFrom(...allowed.map((value) => String(value).toUpperCase())))
        .filter((value) => !allowed.includes(value)),
    });
  }
  // A bound beyond the exact range of a double (int64's) has no violation
  // this generator can write exactly; the int64 edges have their own tests.
  if (typeof schema['minimum'] === 'number' && Number.isSafeInteger(schema['minimum'])) {
    const min = schema['minimum'];
    violations.push({
      rule: 'minimum',
      values: fc.oneof(
        fc.constant(min - 1),
        fc.integer({ min: Math.max(min - 1_000_000, Number.MIN_SAFE_INTEGER), max: min - 1 }),
      ),
    });
  }
  if (typeof schema['maximum'] === 'number' && Number.isSafeInteger(schema['maximum'])) {
    const max = schema['maximum'];
    // Past 2^53 - 1 the next integers cannot be told apart as doubles, so step far enough.
    const step = max >= Number.MAX_SAFE_INTEGER ? 2 : 1;
    violations.push({
      rule: 'maximum',
      values: fc.oneof(
        fc.constant(max + step),
        fc.integer({ min: 1, max: 1_000_000 }).map((extra) => max + Math.max(step, extra)),
      ),
    });
  }
  if (type === 'string' && formatOf(schema)) {
    const { min, max } = stringBounds(schema);
    const lengthOnly = Object.fromEntries(
      Object.entries(schema).filter(([keyword]) => keyword !== 'pattern'),
    ) as Schema;
    const breakers = (formatBreakers[schema['format'] as string] ?? []).filter(
      (text) => fitsString(lengthOnly, text) && !meetsFormat(schema, text),
    );
    const anyText = fc
      .string({ minLength: min, maxLength: Math.min(max, min + 12) })
      .filter((text) => !meetsFormat(schema, text));
    violations.push({
      rule: 'format',
      values: breakers.length > 0 ? fc.oneof(fc.constantFrom(...breakers), anyText) : anyText,
    });
  }
  if (type === 'string') {
    const { min, max } = stringBounds(schema);
    // Shorter text of any kind: a format's values (a uuid's 36 characters) may never be that short.
    if (min > 0)
      violations.push({
        rule: 'minLength',
        values: validString({
          ...schema,
          minLength: 0,
          maxLength: min - 1,
          pattern: undefined,
          format: undefined,
        } as never).filter((text) => codePoints(text) < min),
      });
    if (typeof schema['maxLength'] === 'number') {
      violations.push({
        rule: 'maxLength',
        values: fc
          .tuple(validString({ ...schema, minLength: 1 }), fc.integer({ min: max + 1, max: max + 50 }))
          .map(([text, length]) => cut(text.repeat(Math.ceil(length / codePoints(text))), length)),
      });
    }
    const pattern = regexOf(schema);
    if (pattern) {
      const breakers = patternBreakers.filter((char) => !pattern.test(char));
      if (breakers.length > 0) {
        violations.push({
          rule: 'pattern',
          values: fc
            .tuple(validString(schema), fc.constantFrom(...breakers), fc.nat())
            .map(([text, char, at]) => {
              const chars = [...text];
              chars.splice(at % (chars.length + 1), 0, char);
              return cut(chars.join(''), max);
            })
            .filter((text) => !pattern.test(text) && codePoints(text) >= min),
        });
      }
    }
  }
  return violations;
}

/** An object schema's violations: per property, then the object's own (required, unknown fields). */
export function objectViolations(schema: Schema): Array<{ rule: string; values: fc.Arbitrary<unknown> }> {
  if (Array.isArray(schema['anyOf'])) return anyOfViolations(schema);
  const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
  const required = (schema['required'] as string[] | undefined) ?? [];
  const base = valid(schema) as fc.Arbitrary<Record<string, unknown>>;
  const violations: Violation[] = [{ rule: 'type', values: wrongTypes('object') }];
  for (const [name, property] of Object.entries(properties)) {
    for (const violation of scalarViolations(property)) {
      violations.push({
        rule: `${name}.${violation.rule}`,
        values: fc.tuple(base, violation.values).map(([object, value]) => ({ ...object, [name]: value })),
      });
    }
  }
  for (const name of required) {
    violations.push({
      rule: `required ${name}`,
      values: base.map((object) => Object.fromEntries(Object.entries(object).filter(([key]) => key !== name))),
    });
  }
  const minProperties = Number(schema['minProperties'] ?? 0);
  if (minProperties > required.length)
    violations.push({
      rule: 'minProperties',
      values: base.map((object) =>
        Object.fromEntries(
          Object.entries(object)
            .filter(([key]) => required.includes(key))
            .concat(Object.entries(object).filter(([key]) => !required.includes(key)))
            .slice(0, minProperties - 1),
        ),
      ),
    });
  if (schema['additionalProperties'] === false) {
    const unknownName = fc
      .oneof(
        fc.constantFrom('id', 'Name', 'extra', '__proto__', 'constructor'),
        fc.string({ minLength: 1, maxLength: 10 }),
      )
      .filter((name) => !(name in properties));
    violations.push({
      rule: 'additionalProperties',
      values: fc.tuple(base, unknownName, fc.jsonValue({ maxDepth: 1 })).map(([object, name, value]) => {
        const copy: Record<string, unknown> = { ...object };
        // defineProperty so that __proto__ becomes a real key of the JSON text.
        Object.defineProperty(copy, name, { value, enumerable: true, configurable: true, writable: true });
        return copy;
      }),
    });
  }
  return violations;
}

/**
 * `pattern` repeated to `length` bytes, the copy doubling each turn: a callback per byte
 * (Uint8Array.from) took 80 ms for 1 MiB, a ninth of the bodies bytesWithin draws, and most of the
 * conformance suite's time on an operation that takes a photo.
 */
export function repeatedTo(pattern: Uint8Array, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  if (pattern.length === 0) return bytes;
  bytes.set(pattern.subarray(0, length));
  for (let filled = Math.min(pattern.length, length); filled < length; filled *= 2)
    bytes.copyWithin(filled, 0, Math.min(filled, length - filled));
  return bytes;
}

/**
 * Bodies of a bytes media type (src/openapi/mediaTypes.ts's `bytes` entry samples `bytes`): any bytes at all,
 * none of them need be a valid image, from empty to the operation's limit. Mostly small (fast-check's sizes
 * are biased so), the limit itself as an edge, and bytes that are no UTF-8 (a lone 0xff, a cut sequence), so
 * a tool that decodes what it sends or reads as text shows itself.
 */
export function bytesWithin(limitBytes: number): fc.Arbitrary<Uint8Array> {
  const notUtf8 = fc
    .tuple(fc.uint8Array({ maxLength: Math.max(0, limitBytes - 2) }), fc.constantFrom([0xff], [0xc3], [0xe2, 0x82]))
    .map(([head, tail]) => Uint8Array.from([...head, ...tail].slice(0, limitBytes)));
  // The limit itself: a short drawn pattern repeated to it, since drawing each byte of a 1 MiB photo costs
  // fast-check seconds per body.
  const atLimit = fc.uint8Array({ minLength: 1, maxLength: 16 }).map((pattern) => repeatedTo(pattern, limitBytes));
  return fc.oneof(
    { weight: 6, arbitrary: fc.uint8Array({ maxLength: limitBytes }) },
    { weight: 2, arbitrary: notUtf8 },
    { weight: 1, arbitrary: atLimit },
  );
}
