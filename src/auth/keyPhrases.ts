import { createRequire } from 'node:module';

/** The longest word looked up; longer dictionary entries are rare and cost little as their parts. */
const maxWordLength = 20;

let ranks: Map<string, number> | undefined;

/**
 * Every word of zxcvbn-ts's lists (common passwords, English words, names,
 * seasons...) with its rank: its best position in any list, 1 the most
 * common. Built on first use, like the estimator (keyStrength.ts).
 */
function wordRanks(): Map<string, number> {
  if (ranks) return ranks;
  const require = createRequire(import.meta.url);
  const common = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
  const english = require('@zxcvbn-ts/language-en') as typeof import('@zxcvbn-ts/language-en');
  const built = new Map<string, number>();
  for (const list of Object.values({ ...common.dictionary, ...english.dictionary })) {
    if (!Array.isArray(list)) continue;
    list.forEach((word, index) => {
      const known = built.get(word);
      if (known === undefined || index + 1 < known) built.set(word, index + 1);
    });
  }
  ranks = built;
  return ranks;
}

/** Lower case, Capitalised and UPPER are the forms a phrase attack tries of each word; a form costs a guess more. */
function formGuessesLog10(word: string): number | undefined {
  const lower = word.toLowerCase();
  if (word === lower) return 0;
  if (word === lower.charAt(0).toUpperCase() + lower.slice(1) || word === word.toUpperCase()) return Math.log10(2);
  return undefined;
}

/**
 * What an attacker who strings words together pays for this text: its
 * cheapest split into known words, each costing its rank and its form, and
 * single characters, each costing the alphabet. Unlike zxcvbn, which prices
 * a run of words by their count's factorial and leaves words it could not
 * fit ("ApiKey") as characters at 10 guesses each, a phrase is priced as a
 * phrase attack tries it: word after word.
 */
export function phraseGuessesLog10(text: string, alphabet: number): number {
  const known = wordRanks();
  const perCharacter = Math.log10(alphabet);
  const cost = new Array<number>(text.length + 1).fill(Infinity);
  cost[0] = 0;
  const offer = (end: number, price: number) => {
    if (price < (cost[end] ?? Infinity)) cost[end] = price;
  };
  for (let start = 0; start < text.length; start += 1) {
    const before = cost[start] ?? Infinity;
    offer(start + 1, before + perCharacter);
    for (let end = start + 2; end <= Math.min(text.length, start + maxWordLength); end += 1) {
      const word = text.slice(start, end);
      const rank = known.get(word.toLowerCase());
      const form = formGuessesLog10(word);
      if (rank !== undefined && form !== undefined) offer(end, before + Math.log10(rank) + form);
    }
  }
  return cost[text.length] ?? Infinity;
}
