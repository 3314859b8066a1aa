/**
 * PostgreSQL int8 values arrive as decimal strings (both drivers are set up
 * that way); this is the one place they become numbers. A value beyond
 * Number.MAX_SAFE_INTEGER would be rounded, so it is refused instead.
 */
export function int8ToNumber(value: string | number | bigint): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) {
    throw new RangeError(`int8 value ${String(value)} is not a safe integer`);
  }
  return number;
}
