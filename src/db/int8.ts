/**
 * PostgreSQL int8 values arrive as decimal text; both drivers are set up to
 * parse them with this (pool.ts, embedded.ts), so every int8 of every row is
 * a number once, in the driver, and rows need no copy to convert them. A
 * value beyond Number.MAX_SAFE_INTEGER would be rounded, so it is refused:
 * the driver fails the query with this error.
 */
export function int8ToNumber(text: string): number {
  const number = Number(text);
  if (!Number.isSafeInteger(number)) {
    throw new RangeError(`int8 value ${text} is not a safe integer`);
  }
  return number;
}
