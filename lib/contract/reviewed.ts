/**
 * Changes a person has reviewed as breaking nothing, which the diff cannot
 * prove by itself; each turns a breaking change into a warning that names the
 * reason. Anything not listed exactly is still breaking.
 *
 * Pattern changes a person has reviewed as breaking nothing, which the
 * breaking-change check cannot prove by itself (it does not compare regular
 * expressions). Each entry is exact: the old and the new `pattern` (and, when
 * the change bounds the length too, the old and new minLength and maxLength),
 * and why no request the old one accepted and the service served is refused
 * and no response the new one allows was refused before. Any other pattern
 * or length change is still reported.
 */
export interface ReviewedPatternChange {
  from: string;
  to: string;
  /** The lengths that change with the pattern, old and new; absent: the lengths must not change. */
  lengths?: { from: Lengths; to: Lengths };
  reason: string;
}

export interface Lengths {
  minLength?: number;
  maxLength?: number;
}

export const reviewedPatternChanges: readonly ReviewedPatternChange[] = [
  {
    from: '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]+$',
    to: '^[^\\x00-\\x1F\\x7F-\\x9F]+$',
    reason:
      'PetName, written in the syntax every regex engine reads alike. On Unicode text both accept the ' +
      'same names; the old one also refused unpaired UTF-16 surrogates, which only ECMA-262 u mode reads that way. ' +
      'The service now refuses them in the JSON body parser (src/http/operations/surrogates.ts), and its responses ' +
      'come from stored UTF-8 text, which cannot hold them.',
  },
  {
    from: '^[A-Za-z0-9_-]+$',
    to:
      '^djE6(?:(?:M[Qgw]|N[AQgw]|O[AQ])|(?:M[Tjz]|N[DTjz]|O[DT])[AEIMQUYcgk](?:[w-z0-5](?:(?:(?:[MN][DTjz]|O[DT])' +
      '[AEIMQUYcgk][w-z0-5]){0,3}(?:(?:[MN][AQgw]|O[AQ])|(?:[MN][DTjz]|O[DT])[AEIMQUYcgk])?|(?:(?:[MN][DTjz]|O[DT])' +
      '[AEIMQUYcgk][w-z0-5]){4}(?:[MN][AQgw]|O[AQ])?))?)$',
    lengths: { from: { minLength: 1, maxLength: 64 }, to: { minLength: 6, maxLength: 26 } },
    reason:
      'The page cursor says exactly what the service serves. The old pattern admitted any base64url ' +
      'text, but the service answered 400 to every cursor it did not issue: the new pattern, minLength and ' +
      'maxLength admit every cursor it ever issued (the base64url of "v1:" and a decimal id, canonical) and the ' +
      'positions past the last id, so no request that was served before is refused now ' +
      '(test/contract/cursor.test.ts proves the pattern and src/handlers/cursor.ts agree both ways).',
  },
];

const lengthsOf = (schema: Record<string, unknown>): Lengths => ({
  ...(typeof schema['minLength'] === 'number' ? { minLength: schema['minLength'] } : {}),
  ...(typeof schema['maxLength'] === 'number' ? { maxLength: schema['maxLength'] } : {}),
});

const sameLengths = (a: Lengths, b: Lengths) => a.minLength === b.minLength && a.maxLength === b.maxLength;

/**
 * The reviewed change from the old string schema to the new one, if there is
 * one: its pattern exactly, and its lengths exactly (unchanged when it names none).
 */
export function reviewedPatternChange(
  from: Record<string, unknown>,
  to: Record<string, unknown>,
): ReviewedPatternChange | undefined {
  return reviewedPatternChanges.find(
    (change) =>
      change.from === from['pattern'] &&
      change.to === to['pattern'] &&
      (change.lengths
        ? sameLengths(change.lengths.from, lengthsOf(from)) && sameLengths(change.lengths.to, lengthsOf(to))
        : sameLengths(lengthsOf(from), lengthsOf(to))),
  );
}

/**
 * A security requirement's scopes, reviewed: exactly these scopes of this
 * scheme, from `from` to `to`, on any operation.
 */
export interface ReviewedScopeChange {
  scheme: string;
  from: string[];
  to: string[];
  reason: string;
}

const scopesReason =
  'Scopes came with 1.3.0: every key issued before, and every key issued without scopes, holds every ' +
  'scope (src/auth/scopes.ts), so no key that was accepted is refused; a key restricted to a scope is new.';

export const reviewedScopeChanges: readonly ReviewedScopeChange[] = [
  { scheme: 'bearerAuth', from: [], to: ['pets:read'], reason: scopesReason },
  { scheme: 'bearerAuth', from: [], to: ['pets:write'], reason: scopesReason },
];

export function reviewedScopeChange(scheme: string, from: string[], to: string[]): ReviewedScopeChange | undefined {
  const key = (scopes: string[]) => JSON.stringify([...scopes].sort());
  return reviewedScopeChanges.find(
    (change) => change.scheme === scheme && key(change.from) === key(from) && key(change.to) === key(to),
  );
}
