// A cursor is the last id of the previous page, wrapped so that clients treat
// it as opaque and the format can change without changing the contract.
// openapi.yaml's cursor `pattern` matches exactly the texts encodeCursor can
// make for 1 to 16 decimal digits (test/handlers/cursor.test.ts proves both
// directions): a schema-valid cursor is always one this service serves.
const version = 'v1:';
const positionDigits = /^[1-9][0-9]{0,15}$/;

export function encodeCursor(lastId: number): string {
  return Buffer.from(version + String(lastId), 'utf8').toString('base64url');
}

/**
 * The id the next page starts after, or undefined for text not in the exact
 * form encodeCursor makes (the handler answers 400). Only that exact text is
 * accepted: base64 decoding ignores the unused low bits of the last
 * character, so "djE6MjA", "djE6MjB", "djE6MjC" and "djE6MjD" would all read
 * as the position after 20, and a cache or a log would see four cursors for
 * one page. Cursors are not signed: one built in this exact form names a
 * position in the list, which shows nothing the list does not. A position
 * past the largest id the service assigns (up to 16 digits) reads as that id:
 * nothing follows it.
 */
export function decodeCursor(cursor: string): number | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const digits = text.startsWith(version) ? text.slice(version.length) : '';
  if (!positionDigits.test(digits) || encodeText(text) !== cursor) return undefined;
  return Math.min(Number(digits), Number.MAX_SAFE_INTEGER);
}

const encodeText = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
