// A cursor is the last id of the previous page, wrapped so that clients treat
// it as opaque and the format can change without changing the contract.
const version = 'v1:';

export function encodeCursor(lastId: number): string {
  return Buffer.from(version + String(lastId), 'utf8').toString('base64url');
}

/**
 * The id the next page starts after, or undefined for a cursor this service
 * did not make (the handler answers 400). Only the exact text encodeCursor makes
 * is accepted: base64 decoding ignores the unused low bits of the last
 * character, so "djE6MjA", "djE6MjB", "djE6MjC" and "djE6MjD" would all read
 * as the position after 20, and a cache or a log would see four cursors for
 * one page. Cursors are not signed: one built in this exact form names a
 * position in the list, which shows nothing the list does not.
 */
export function decodeCursor(cursor: string): number | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const digits = text.startsWith(version) ? text.slice(version.length) : '';
  const id = /^[1-9][0-9]{0,15}$/.test(digits) ? Number(digits) : Number.NaN;
  return Number.isSafeInteger(id) && encodeCursor(id) === cursor ? id : undefined;
}
