import { hash } from 'node:crypto';

// Entity tags and the preconditions made of them (RFC 9110, 8.8.3 and 13),
// with no HTTP in sight: the HTTP layer tags the bodies it answers and reads
// If-Match and If-None-Match with these functions, and a handler checks a
// write's precondition with them inside its transaction, so both sides tag
// and compare one way.

// Below this many UTF-16 units a body is joined to its Link and hashed once:
// copying a short string costs less than a second hash call.
const joinBelow = 1024;

/**
 * A strong entity tag of what a response says: the serialized body and, when
 * the response has one, its Link header (a page whose body is unchanged but
 * that gained a next page has changed). 132 bits of SHA-256, base64url, from
 * the one-shot crypto.hash (no Hash object per response). A long body is
 * hashed alone and the Link mixed into its digest: joined to the Link it
 * would be a new string, copied whole to be hashed and the body copied again
 * to be written, while hashed alone it is flattened once and written as it
 * is: one copy fewer of each long body (6.4 KB for a 100-pet page).
 */
export function entityTagOf(payload: string | Uint8Array, link?: unknown): string {
  if (typeof link !== 'string') return `"${hash('sha256', payload, 'base64url').slice(0, 22)}"`;
  // Bytes are never joined to text: read as UTF-8, two bodies could read alike.
  const tagged =
    typeof payload === 'string' && payload.length < joinBelow
      ? hash('sha256', `${payload}\n${link}`, 'base64url')
      : hash('sha256', `${hash('sha256', payload, 'base64url')}\n${link}`, 'base64url');
  return `"${tagged.slice(0, 22)}"`;
}

/** An If-Match or If-None-Match field: `*` (any current representation), or the entity tags it lists. */
export type EntityTagList = '*' | readonly string[];

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; etagc = %x21 / %x23-7E / obs-text (RFC 9110, 8.8.3).
const entityTag = /(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"/y;
// Between list elements: optional whitespace and commas (RFC 9110 5.6.1.2: empty elements are ignored).
const separators = /[\t ,]*/y;
const space = /[\t ]*/y;

function skip(pattern: RegExp, field: string, at: number): number {
  pattern.lastIndex = at;
  pattern.test(field);
  return pattern.lastIndex;
}

/**
 * The tags a field lists, or `*`; undefined when the field is not
 * `"*" / 1#entity-tag` (a stray word, a `*` beside tags, an unterminated
 * quote, nothing at all). Commas may occur inside a tag, so the field is
 * read tag by tag, never split. A caller answers undefined as a malformed
 * request: a field that ignored what it could not read would hold where the
 * client meant it to fail (`garbage` in If-None-Match matched nothing, so a
 * write went ahead).
 */
export function parseEntityTagList(field: string): EntityTagList | undefined {
  if (field.trim() === '*') return '*';
  const tags: string[] = [];
  let at = skip(separators, field, 0);
  while (at < field.length) {
    entityTag.lastIndex = at;
    const tag = entityTag.exec(field)?.[0];
    if (tag === undefined) return undefined;
    tags.push(tag);
    at = skip(space, field, at + tag.length);
    if (at < field.length && field[at] !== ',') return undefined;
    at = skip(separators, field, at);
  }
  return tags.length > 0 ? tags : undefined;
}

const opaque = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);

/** RFC 9110, 8.8.3.2: equal, and neither weak. */
export function strongMatch(a: string, b: string): boolean {
  return a === b && !a.startsWith('W/');
}

/** RFC 9110, 8.8.3.2: equal once any W/ is set aside. */
export function weakMatch(a: string, b: string): boolean {
  return opaque(a) === opaque(b);
}

/** If-Match (13.1.1): true when `*` and a representation exists, or a listed tag matches it strongly. */
export function ifMatchHolds(list: EntityTagList, current: string | undefined): boolean {
  if (current === undefined) return false;
  return list === '*' || list.some((tag) => strongMatch(tag, current));
}

/** If-None-Match (13.1.2): false when `*` and a representation exists, or a listed tag matches it weakly. */
export function ifNoneMatchHolds(list: EntityTagList, current: string | undefined): boolean {
  if (current === undefined) return true;
  return list !== '*' && !list.some((tag) => weakMatch(tag, current));
}

/** The entity-tag preconditions of a request, as the operation honours them. */
export interface EntityTagConditions {
  readonly ifMatch: EntityTagList | undefined;
  readonly ifNoneMatch: EntityTagList | undefined;
}

/**
 * What the preconditions say of a representation whose tag is `current`
 * (undefined: none exists), in RFC 9110 13.2.2's order: a failed If-Match
 * fails the request; a failed If-None-Match makes a GET or HEAD (`safe`) a
 * 304 and fails any other method. (Dates are not validators here: this
 * service sends no Last-Modified.)
 */
export function evaluateConditions(
  conditions: EntityTagConditions,
  current: string | undefined,
  safe: boolean,
): 'met' | 'not_modified' | 'failed' {
  if (conditions.ifMatch !== undefined && !ifMatchHolds(conditions.ifMatch, current)) return 'failed';
  if (conditions.ifNoneMatch !== undefined && !ifNoneMatchHolds(conditions.ifNoneMatch, current))
    return safe ? 'not_modified' : 'failed';
  return 'met';
}

/**
 * A write's precondition as its handler receives it: the request's
 * conditions, and the check a handler runs inside its transaction, against
 * the representation the target has now (undefined: none), before it writes.
 * `isMetBy` tags that representation as a GET of it would be tagged (the same
 * serialization of the same schema, then entityTagOf). False: answer the
 * operation's 412, and write nothing.
 */
export interface Precondition<Representation> extends EntityTagConditions {
  isMetBy(current: Representation | undefined): boolean;
  /** The entity tag a GET would answer for this representation. */
  tagOf(representation: Representation): string;
}
