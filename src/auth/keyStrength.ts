import { createRequire } from 'node:module';
import type { MatchEstimated, ZxcvbnFactory } from '@zxcvbn-ts/core';
import { phraseGuessesLog10 } from './keyPhrases.js';
import { separators, shapeViews } from './keyShapes.js';

/**
 * The fewest guesses, as a power of ten, a bootstrap key's secret must cost
 * an attacker who knows every pattern the estimator knows: 10^30, about
 * 100 bits; at 10^12 SHA-256 guesses a second against a leaked hash, 3 × 10^10
 * years. A random 32-character hex secret scores about 10^49 here, the body
 * of a generated key (43 base62 characters) about 10^77; a block repeated,
 * a keyboard walk or seven dictionary words score 10^3 to 10^24.
 */
const minGuessesLog10 = 30;

/**
 * Substitutions (4 for a, 0 for o...) the estimator undoes per word. Its
 * default has it try so many combinations that one key takes a second to
 * judge; two find most words written so (p4ssw0rd), at a tenth of that.
 */
const l33tMaxSubstitutions = 2;

/** What a pattern is called in a refusal. */
const patternNames: Record<string, string> = {
  dictionary: 'dictionary words or common passwords',
  spatial: 'a keyboard walk',
  repeat: 'a repeated block',
  sequence: 'a sequence',
  date: 'a date',
  regex: 'a year',
};

let estimator: ZxcvbnFactory | undefined;

/**
 * zxcvbn-ts with its common passwords, keyboard layouts and English words,
 * built on first use: its dictionaries take half a second to rank, and a
 * server without a bootstrap key never needs them. Loaded with require at
 * that moment, so that starting without one does not load them either.
 */
function zxcvbn(): ZxcvbnFactory {
  if (estimator) return estimator;
  const require = createRequire(import.meta.url);
  const core = require('@zxcvbn-ts/core') as typeof import('@zxcvbn-ts/core');
  const common = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
  const english = require('@zxcvbn-ts/language-en') as typeof import('@zxcvbn-ts/language-en');
  estimator = new core.ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...english.dictionary },
    graphs: common.adjacencyGraphs,
    translations: english.translations,
    l33tMaxSubstitutions,
  });
  return estimator;
}

/** How many symbols a brute-force search over this text's character classes tries per character. */
function alphabetSize(text: string): number {
  let size = 0;
  if (/[0-9]/.test(text)) size += 10;
  if (/[a-z]/.test(text)) size += 26;
  if (/[A-Z]/.test(text)) size += 26;
  if (/[^0-9a-zA-Z]/.test(text)) size += 33;
  return size;
}

function log10Factorial(n: number): number {
  let sum = 0;
  for (let k = 2; k <= n; k += 1) sum += Math.log10(k);
  return sum;
}

/**
 * The estimator's splits of the texts one judgement has asked about, by text: a secret's views share texts
 * (a secret without separators is its own text without them; a lower-case secret is its own case-folded
 * view): a random 43-character key's judgement asked about 11 texts, 9 of them distinct (140 ms). Kept for one judgement only, so no secret
 * outlives the call that judges it.
 */
type Splits = Map<string, MatchEstimated[]>;

function splitOf(text: string, splits: Splits): MatchEstimated[] {
  let sequence = splits.get(text);
  if (sequence === undefined) {
    sequence = zxcvbn().check(text).sequence as MatchEstimated[];
    splits.set(text, sequence);
  }
  return sequence;
}

interface Estimate {
  guessesLog10: number;
  /** The patterns found, with the text each covers. */
  patterns: { name: string; token: string }[];
}

/**
 * The estimator's cheapest split of the text into patterns, costed again
 * with the parts no pattern explains guessed over the text's own alphabet:
 * the estimator counts 10 per character there, so a random hex or base64
 * key would score no better than digits. Patterns keep their own cost; the
 * order of the parts adds its factorial, as in zxcvbn.
 */
function estimate(text: string, splits: Splits, alphabet = alphabetSize(text)): Estimate {
  const sequence = splitOf(text, splits);
  const perCharacter = Math.log10(alphabet);
  let guessesLog10 = log10Factorial(sequence.length);
  const patterns: Estimate['patterns'] = [];
  for (const match of sequence) {
    if (match.pattern === 'bruteforce') {
      guessesLog10 += match.token.length * perCharacter;
    } else {
      guessesLog10 += match.guessesLog10;
      patterns.push({ name: patternNames[match.pattern] ?? match.pattern, token: match.token });
    }
  }
  return { guessesLog10, patterns };
}

/**
 * The cheapest of three prices for one part of a view: the estimator's, a
 * phrase attack's, and trying every text of its length over its alphabet,
 * which bounds the others: the estimator picks its split by its own prices,
 * and may explain a mask of two symbols by words dearer than the mask itself.
 */
function partGuessesLog10(text: string, splits: Splits, alphabet = alphabetSize(text)): number {
  if (text === '') return 0;
  return Math.min(
    estimate(text, splits, alphabet).guessesLog10,
    phraseGuessesLog10(text, alphabet),
    text.length * Math.log10(alphabet),
  );
}

/**
 * The cheapest way an attacker's rules make the secret (keyShapes.ts): a
 * view costs its parts' guesses together, and the number of views, since an
 * attacker tries each; undefined when none comes under the floor. A view is
 * left as soon as its parts reach the floor.
 */
function weakestShape(secret: string, splits: Splits): { name: string; guessesLog10: number } | undefined {
  const views = shapeViews(secret);
  let weakest: { name: string; guessesLog10: number } | undefined;
  for (const view of views) {
    let guessesLog10 = Math.log10(views.length);
    for (const part of view.parts) {
      guessesLog10 += partGuessesLog10(part.text, splits, part.alphabet);
      if (guessesLog10 >= minGuessesLog10) break;
    }
    if (guessesLog10 < (weakest?.guessesLog10 ?? minGuessesLog10)) weakest = { name: view.name, guessesLog10 };
  }
  return weakest;
}

function refusal(found: string, guessesLog10: number): string {
  return `it is made of ${found}: about 10^${Math.floor(guessesLog10)} guesses, at least 10^${minGuessesLog10} needed`;
}

/**
 * Why this secret is too easy to guess, naming the patterns that make it
 * so, or undefined. Judged as written and with any separators between words
 * taken out (the estimator reads "correct horse" as two words only without them),
 * then by the shapes an attacker's rules build (case changes, counters after
 * words, texts taken in turn, word after word), since the estimator prices
 * what it cannot explain as random characters.
 */
export function weakSecretReason(secret: string): string | undefined {
  const splits: Splits = new Map();
  const judged = [secret, secret.replace(separators, '')]
    .filter((text) => text !== '')
    .map((text) => estimate(text, splits))
    .reduce((weakest, next) => (next.guessesLog10 < weakest.guessesLog10 ? next : weakest));
  if (judged.guessesLog10 >= minGuessesLog10) {
    const shape = weakestShape(secret, splits);
    return shape && refusal(shape.name, shape.guessesLog10);
  }
  const tokens = new Map<string, string[]>();
  for (const { name, token } of judged.patterns) {
    tokens.set(name, [...(tokens.get(name) ?? []), JSON.stringify(token.slice(0, 24))]);
  }
  const found = [...tokens].map(([name, quoted]) => `${name} (${quoted.join(', ')})`);
  return refusal(found.length > 0 ? found.join(', ') : 'few kinds of characters', judged.guessesLog10);
}
