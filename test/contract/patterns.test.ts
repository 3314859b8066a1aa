import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { parse } from 'yaml';
import { anyCodePoint } from '../../lib/conformance/arbitraries.js';
import { readLocalSpec } from '../../lib/conformance/spec.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { regexEngines, type Engine } from '../helpers/regexEngines/engines.js';

/**
 * Every `pattern` of openapi.yaml means the same in each regex engine its
 * readers use (issue 28): same compile verdict, same answer on every probe.
 * Probes are fixed edge cases plus texts drawn from the pattern and
 * mutated. The one difference allowed is Python's `$`, which also matches
 * before a final line feed: the spec's description says so and the service
 * refuses such values (test/api.test.ts, "name ending with a line feed").
 */

interface Located {
  where: string;
  pattern: string;
}

function patternsOf(node: unknown, where: string, out: Located[] = []): Located[] {
  if (Array.isArray(node)) node.forEach((item, index) => patternsOf(item, `${where}[${index}]`, out));
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') out.push({ where, pattern: value });
      else patternsOf(value, `${where}/${key}`, out);
    }
  }
  return out;
}

const fixedProbes = [
  '',
  'a',
  'Rex',
  'Z9',
  '_-',
  '@1',
  '@-12',
  '"abc"',
  '"a b"',
  '!',
  '~',
  'a b',
  ' a',
  'a ',
  ' ',
  '\n',
  'a\n',
  '\na',
  'a\nb',
  '\r',
  'a\r\n',
  '\t',
  '\u0000',
  'a\u0000',
  '\u0007',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u0085',
  '\u009f',
  '\u00a0',
  'é',
  'Ünï',
  '€',
  '\u2028',
  '😀',
  'Rex 🐕',
  '\ufffd',
  '\uffff',
  'x'.repeat(300),
];
const loneSurrogates = ['\ud800', 'a\udfff', '\udc00\ud800'];
const insertions = ['\n', '\u0000', '\u0085', ' ', '😀', '\u00e9', '%', '/'];

/** Texts to try on a pattern: the fixed ones, some it matches, and those with one character inserted. */
function probesFor(pattern: string): string[] {
  const matching = fc.sample(fc.stringMatching(new RegExp(pattern, 'u')), { numRuns: 40, seed: 28 });
  const anyText = fc.sample(fc.string({ unit: anyCodePoint, maxLength: 12 }), { numRuns: 40, seed: 28 });
  const mutated = matching.flatMap((text, index) => {
    const char = insertions[index % insertions.length]!;
    const at = index % (text.length + 1);
    return [text + '\n', text.slice(0, at) + char + text.slice(at)];
  });
  const wellFormed = [...fixedProbes, ...matching, ...anyText, ...mutated].filter(
    (text) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text),
  );
  return [...new Set(wellFormed)];
}

/** What differs between the engines on a pattern, beyond Python's final line feed. */
function disagreements(engines: Engine[], pattern: string): { problems: string[]; pythonNewline: number } {
  const probes = probesFor(pattern);
  const [reference, ...others] = engines;
  const expected = reference!.run(pattern, [...probes, ...loneSurrogates]);
  if (expected.error) return { problems: [`${reference!.name} refuses it: ${expected.error}`], pythonNewline: 0 };
  const problems: string[] = [];
  let pythonNewline = 0;
  for (const engine of others) {
    const texts = engine.takesLoneSurrogates ? [...probes, ...loneSurrogates] : probes;
    const verdicts = engine.run(pattern, texts);
    if (verdicts.error) {
      problems.push(`${engine.name} refuses it: ${verdicts.error}`);
      continue;
    }
    texts.forEach((text, index) => {
      const theirs = verdicts.matches![index];
      const ours = expected.matches![index];
      if (theirs === ours) return;
      const finalNewline =
        engine.name === 'Python re' &&
        theirs === true &&
        text.endsWith('\n') &&
        reference!.run(pattern, [text.slice(0, -1)]).matches![0] === true;
      if (finalNewline) pythonNewline += 1;
      else problems.push(`${engine.name} says ${theirs} for ${JSON.stringify(text)}, ${reference!.name} ${ours}`);
    });
  }
  return { problems, pythonNewline };
}

const { engines, missing, close } = regexEngines();
t.teardown(close);

t.test('the engines this test compares', async (t) => {
  t.comment(`engines: ${engines.map((engine) => engine.name).join(', ')}`);
  for (const reason of missing) t.comment(`not compared: ${reason}`);
  if (process.env['CI']) t.same(missing, [], 'CI has every engine (scripts/ci-system-deps.sh installs RE2)');
  t.ok(engines.length >= 3, 'at least three engines');
});

t.test('every pattern of openapi.yaml means the same in every engine', async (t) => {
  const located = patternsOf(readLocalSpec(), '#');
  t.ok(located.length > 0, `${located.length} patterns`);
  let newlineCases = 0;
  for (const { where, pattern } of located) {
    const { problems, pythonNewline } = disagreements(engines, pattern);
    newlineCases += pythonNewline;
    t.same(problems.slice(0, 5), [], `${where}: ${pattern}`);
  }
  t.comment(`Python's $ before a final line feed, the documented difference: ${newlineCases} probes`);
});

t.test('the comparison finds what it is for: the 1.1.0 PetName pattern is not portable', async (t) => {
  const released = parse(readFileSync(join(repoRoot, 'contract/released/openapi-1.1.0.yaml'), 'utf8')) as unknown;
  const name = patternsOf(released, '#').find(({ where }) => where.endsWith('/PetName'));
  t.ok(name, 'the released PetName has a pattern');
  const { problems } = disagreements(engines, name!.pattern);
  t.ok(
    problems.some((problem) => problem.startsWith('ECMA-262 without u says false for "😀"')),
    'without u, its surrogate range refuses every astral character',
  );
  if (engines.some((engine) => engine.name === 'RE2'))
    t.ok(
      problems.some((problem) => problem.startsWith('RE2 refuses it')),
      'RE2 has no \\u escapes',
    );
});
