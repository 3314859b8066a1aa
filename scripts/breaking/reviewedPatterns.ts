/**
 * Pattern changes a person has reviewed as breaking nothing, which the
 * breaking-change check cannot prove by itself (it does not compare regular
 * expressions). Each entry is exact: the old and the new `pattern`, and why
 * no request the old one accepted is refused and no response the new one
 * allows was refused before. Any other pattern change is still reported.
 */
export const reviewedPatternChanges: ReadonlyArray<{ from: string; to: string; reason: string }> = [
  {
    from: '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]+$',
    to: '^[^\\x00-\\x1F\\x7F-\\x9F]+$',
    reason:
      'PetName, written in the syntax every regex engine reads alike (issue 28). On Unicode text both accept the ' +
      'same names; the old one also refused unpaired UTF-16 surrogates, which only ECMA-262 u mode reads that way. ' +
      'The service now refuses them in the JSON body parser (src/http/operations/surrogates.ts), and its responses ' +
      'come from stored UTF-8 text, which cannot hold them.',
  },
];

export const isReviewedPatternChange = (from: unknown, to: unknown): boolean =>
  reviewedPatternChanges.some((change) => change.from === from && change.to === to);
