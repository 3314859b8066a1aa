import { ApiError } from '../../errors.js';
import { excerpt } from '../errors/excerpt.js';

const numberLiteral = /-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y;
const plainInteger = /^-?\d+$/;
/** Space, tab, line feed, carriage return: the whitespace JSON allows between tokens. */
const jsonWhitespace = new Set([0x20, 0x09, 0x0a, 0x0d]);

function fieldName(key: string | undefined): string {
  return key === undefined ? 'body' : `body.${excerpt(key)}`;
}

/** Digits without their leading and trailing zeros, and how many trailing zeros there were: "01200" is ["12", 2]. */
function significand(digits: string): [string, number] {
  let start = 0;
  while (start < digits.length && digits.charCodeAt(start) === 0x30) start += 1;
  let end = digits.length;
  while (end > start && digits.charCodeAt(end - 1) === 0x30) end -= 1;
  return [digits.slice(start, end), digits.length - end];
}

/** The integer a double holds, in decimal digits without sign: exact, even past 2^53 (where String() rounds). */
function integerDigits(value: number): string {
  const magnitude = Math.abs(value);
  return Number.isSafeInteger(magnitude) ? String(magnitude) : BigInt(magnitude).toString();
}

/**
 * Whether the literal's decimal value is exactly the double it is read as,
 * when that double is an integer. A literal read as a fraction is left to the
 * schema (every number in this contract is an integer, so it is refused there);
 * what this catches is the literal that rounding turns into an integer it is
 * not: 2.9999999999999999 read as 3, 9007199254740993 read as 9007199254740992.
 * Both sides are compared as significant digits and a power of ten.
 */
function isExactWhereIntegral(literal: string, value: number): boolean {
  if (!Number.isInteger(value)) return true;
  if (Number.isSafeInteger(value) && plainInteger.test(literal)) return true;
  numberLiteral.lastIndex = 0;
  const [, whole = '', fraction = '', exponent = '0'] = numberLiteral.exec(literal) ?? [];
  const [literalDigits, literalZeros] = significand(whole + fraction);
  const [valueDigits, valueZeros] = significand(integerDigits(value));
  if (valueDigits === '') return literalDigits === '';
  return literalDigits === valueDigits && Number(exponent) - fraction.length + literalZeros === valueZeros;
}

function inexactNumber(literal: string, value: number, key: string | undefined): ApiError {
  return new ApiError(
    400,
    'invalid_request',
    `${fieldName(key)} is ${excerpt(literal)}, which JSON parsers round to ${String(value)}; ` +
      `integers are taken only as written exactly, up to ${Number.MAX_SAFE_INTEGER}`,
  );
}

function duplicateKey(key: string): ApiError {
  return new ApiError(
    400,
    'invalid_request',
    `body has property '${excerpt(key)}' more than once; send each property once`,
  );
}

/** The index just past the string literal that opens at start (text is valid JSON). */
function endOfString(text: string, start: number): number {
  let index = start + 1;
  for (;;) {
    const char = text.charCodeAt(index);
    if (char === 0x22) return index + 1;
    index += char === 0x5c ? 2 : 1;
  }
}

function nextNonSpace(text: string, start: number): number {
  let index = start;
  while (jsonWhitespace.has(text.charCodeAt(index))) index += 1;
  return index;
}

/** An open object (its keys so far, the latest last) or an open array (no keys). */
interface Container {
  keys: Set<string> | undefined;
  latestKey: string | undefined;
}

/** The key a value sits under, from the innermost container that has one. */
function enclosingKey(open: Container[]): string | undefined {
  for (let depth = open.length - 1; depth >= 0; depth -= 1) {
    const key = open[depth]?.latestKey;
    if (key !== undefined) return key;
  }
  return undefined;
}

/**
 * Refuses what JSON.parse accepts but changes silently: a number literal that
 * rounding turns into an integer it does not spell, and a property given twice
 * in one object (JSON.parse keeps the last). One pass over text that already
 * parsed, so it never meets a syntax error; each open object keeps the keys it
 * has seen (decoded, so "n\u0061me" and "name" are the same key).
 */
export function assertLiteralsExact(text: string): void {
  const open: Container[] = [];
  let index = 0;
  while (index < text.length) {
    const char = text.charAt(index);
    if (char === '"') {
      const end = endOfString(text, index);
      const container = open[open.length - 1];
      if (container?.keys !== undefined && text.charAt(nextNonSpace(text, end)) === ':') {
        const quoted = text.slice(index, end);
        // Escapes decoded, so that "n\u0061me" and "name" are one key.
        const key = quoted.includes('\\') ? (JSON.parse(quoted) as string) : quoted.slice(1, -1);
        if (container.keys.has(key)) throw duplicateKey(key);
        container.keys.add(key);
        container.latestKey = key;
      }
      index = end;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      numberLiteral.lastIndex = index;
      const literal = numberLiteral.exec(text)?.[0] ?? char;
      const value = Number(literal);
      if (!isExactWhereIntegral(literal, value)) throw inexactNumber(literal, value, enclosingKey(open));
      index += literal.length;
    } else {
      if (char === '{') open.push({ keys: new Set(), latestKey: undefined });
      else if (char === '[') open.push({ keys: undefined, latestKey: undefined });
      else if (char === '}' || char === ']') open.pop();
      index += 1;
    }
  }
}
