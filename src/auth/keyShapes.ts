/**
 * Ways an attacker's rules build a secret out of simpler texts, each undone
 * without loss: a secret so built costs at most the guesses of its parts
 * together. Each view names the rule and the parts, with the alphabet a part
 * is drawn from where it is not the part's own characters (a mask of two
 * kinds is two symbols, whatever letters spell it).
 */
export interface ShapeView {
  name: string;
  parts: { text: string; alphabet?: number }[];
}

/** Characters people put between the words of a passphrase: judged without them too. */
export const separators = /[\s\-_.,+:;/|]+/g;

/** A key is RFC 6750 token characters (the config's pattern), all ASCII: one character is one code unit. */
const characters = (text: string): string[] => Array.from(text);

const letter = /\p{L}/u;
const upper = /\p{Lu}/u;
const digit = /[0-9]/;

/** Which case each letter has (a for lower, A for upper): with the text in lower case it gives the text back. */
function caseMask(text: string): string {
  return characters(text)
    .filter((char) => letter.test(char))
    .map((char) => (upper.test(char) ? 'A' : 'a'))
    .join('');
}

function kindOf(char: string): 'letter' | 'digit' | 'symbol' {
  return letter.test(char) ? 'letter' : digit.test(char) ? 'digit' : 'symbol';
}

/** Letters, digits and the rest apart, and the mask saying where each kind sits: "Summer2024." is 3 texts and "aaaaaa0000.". */
function byKind(text: string): ShapeView {
  const chars = characters(text);
  const kinds = chars.map(kindOf);
  const present = new Set(kinds);
  const sign = { letter: 'a', digit: '0', symbol: '.' } as const;
  return {
    name: 'words or letters with counters or symbols between them',
    parts: [
      ...[...present].map((kind) => ({ text: chars.filter((_, index) => kinds[index] === kind).join('') })),
      ...(present.size > 1 ? [{ text: kinds.map((kind) => sign[kind]).join(''), alphabet: present.size }] : []),
    ],
  };
}

/** Every stride-th character from each offset: "a1b2c3" is "abc" and "123". */
function interleaved(text: string, stride: number): ShapeView {
  const chars = characters(text);
  return {
    name: `${stride} texts taken in turn`,
    parts: Array.from({ length: stride }, (_, offset) => ({
      text: chars.filter((_, index) => index % stride === offset).join(''),
    })),
  };
}

/** Each run of one character once, and the runs' lengths: "aaaabbbb" is "ab" and "4,4". */
function runs(text: string): ShapeView {
  const found = [...text.matchAll(/(.)\1*/gsu)].map(([run]) => run);
  return {
    name: 'runs of one character',
    parts: [{ text: found.map((run) => run.charAt(0)).join('') }, { text: found.map((run) => run.length).join(',') }],
  };
}

/** The view of the text in lower case, with the case mask that gives the letters their case back. */
function caseFolded(secret: string, view: (lower: string) => ShapeView): ShapeView {
  const folded = view(secret.toLowerCase());
  return { name: `${folded.name}, capitals added`, parts: [...folded.parts, { text: caseMask(secret), alphabet: 2 }] };
}

const asIs = (text: string): ShapeView => ({ name: 'a guessable text', parts: [{ text }] });

/** The views a bootstrap key's secret is judged by, besides the text itself (keyStrength.ts). */
export function shapeViews(secret: string): ShapeView[] {
  return [
    caseFolded(secret, asIs),
    { ...caseFolded(secret.replace(separators, ''), asIs), name: 'words between separators, capitals added' },
    byKind(secret),
    caseFolded(secret, byKind),
    runs(secret),
    caseFolded(secret, runs),
    interleaved(secret, 2),
    interleaved(secret, 3),
    caseFolded(secret, (lower) => interleaved(lower, 2)),
  ];
}
