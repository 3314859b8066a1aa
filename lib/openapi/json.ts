// JSON values as the OpenAPI tools read them.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/** The value with every object's keys in one order (arrays kept): JSON objects are unordered, key order says nothing. */
export function keysSorted<T>(value: T): T {
  if (Array.isArray(value)) return value.map(keysSorted) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(byKey)
      .map(([key, item]) => [key, keysSorted(item)]),
  ) as T;
}

/** A value as JSON text, every object's keys in one order. */
export const canonicalJson = (value: Json | undefined): string | undefined => JSON.stringify(keysSorted(value));

/** The same JSON value, whatever order each object's keys are written in. */
export const same = (a: Json | undefined, b: Json | undefined) => canonicalJson(a) === canonicalJson(b);
