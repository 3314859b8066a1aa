import { randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import { bootstrapKeyProblem, generateApiKey, keyChecksum } from '../../src/auth/keys.js';

// What an attacker's list tries first, one shape per line, each long enough to pass the length rule: the
// strength estimate alone must refuse it. Checksummed ones carry a valid checksum, which is public.
const withChecksum = (body: string) => body + keyChecksum(body);
const body43 = (text: string) => `pets_${text.repeat(43).slice(0, 43)}`;

const weak: [shape: string, key: string][] = [
  ['letters and digits in turn', 'a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6'],
  ['case pairs', 'aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpP'],
  ['case pairs, checksummed', withChecksum(body43('aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwW'))],
  ['letters and digits in turn, checksummed', withChecksum(body43('a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2'))],
  ['a capitalised phrase', 'ThisIsMyVerySecretApiKeyForProduction'],
  ['a season and its year, repeated', 'Summer2024.Summer2025.Summer2026.Summer2027'],
  ['seasons with years', 'Winter2025Spring2026Summer2027Autumn2028'],
  ['a word with a counter', 'password1password2password3password4'],
  ['a word with a counter and a symbol', 'Password1!Password2!Password3!Password4!'],
  ['a phrase repeated', 'myapikeymyapikeymyapikeymyapikey'],
  ['a phrase, a year and a symbol', 'MySuperSecretProductionApiKey2024!'],
  ['a common password repeated, digits after', 'letmeinletmeinletmeinletmein12345'],
  ['the alphabet backwards', 'ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrq'],
  ['digits and hex letters in turn', '0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e'],
  ['alternating case through the alphabet', 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789'],
  ['a keyboard walk of digit and letter in turn', '1q2w3e4r5t6y7u8i9o0p1q2w3e4r5t6y7u8i'],
  ['a block repeated', 'abc123abc123abc123abc123abc123abc123'],
  ['each letter doubled', 'aabbccddeeffgghhiijjkkllmmnnoopp'],
  ['capitals and digits in order', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'],
  ['a pangram with spaces', 'the quick brown fox jumps over the lazy dog'],
  ['a pangram, capitalised', 'TheQuickBrownFoxJumpsOverTheLazyDog'],
  ['a phrase repeated, plain', 'iloveyouiloveyouiloveyouiloveyou'],
  ['a word with counters of three digits', 'admin123admin456admin789admin000'],
  ['a name, a year and a symbol, repeated', 'Company2024!Company2024!Company2024!'],
  ['months with a year', 'January2025February2025March2025April2025'],
  ['days of the week with separators', 'monday-tuesday-wednesday-thursday-friday'],
  ['a substituted password repeated', 'p@ssw0rdp@ssw0rdp@ssw0rdp@ssw0rd'],
  ['shifted digits repeated', '!@#$%^&*()!@#$%^&*()!@#$%^&*()!@'],
  ['doubled digits in order', '11223344556677889900112233445566'],
  ['a two-digit counter', '0102030405060708091011121314151617'],
  ['two runs of one letter', 'aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb'],
  ['the alphabet backwards in alternating case', 'zYxWvUtSrQpOnMlKjIhGfEdCbA9876543210'],
  ['keyboard rows in both cases', 'qwertyQWERTYasdfghASDFGHzxcvbnZXCVBN'],
  ['two words with a counter', 'secretkey1secretkey2secretkey3secretkey4'],
  ['the alphabet between separators', 'a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t'],
  ['runs of four letters in alternating case', 'AAAAbbbbCCCCddddEEEEffffGGGGhhhhIIII'],
  ['a plain phrase', 'productiondatabasepasswordforthepetstore'],
  ['the spelling alphabet', 'Alpha-Bravo-Charlie-Delta-Echo-Foxtrot-Golf'],
  ['two timestamps', '2024-01-01T00:00:00Z2024-12-31T23:59:59Z'],
  ['a hex word repeated', 'deadbeefdeadbeefdeadbeefdeadbeef'],
  ['the prefix and an alternation', `pets_${'ab'.repeat(22)}`],
  ['a season and year, checksummed', withChecksum(body43('Summer2024'))],
  ['three classes repeated', 'abc123ABC!@#abc123ABC!@#abc123ABC!@#'],
  ['ordinal words', 'FirstSecondThirdFourthFifthSixthSeventh'],
  ['number words', 'OneTwoThreeFourFiveSixSevenEightNineTen'],
  ['words, a year and a version between separators', 'petstore-api-key-production-2024-v1-final'],
  ['two sequences in turn, opposite ways', 'aZbYcXdWeVfUgThSiRjQkPlOmNnMoLpK'],
];

const strong: [shape: string, key: string][] = [
  ...Array.from({ length: 4 }, (_, index): [string, string] => [`a generated key (${index + 1})`, generateApiKey()]),
  ['32 hex digits', randomBytes(16).toString('hex')],
  ['32 hex digits, capitals', randomBytes(16).toString('hex').toUpperCase()],
  ['base64 of 24 bytes', randomBytes(24).toString('base64')],
  ['the prefix and base64url of 32 bytes', `pets_${randomBytes(32).toString('base64url')}`],
  ['base64url of 48 bytes', randomBytes(48).toString('base64url')],
  ['a random UUID', randomUUID()],
];

t.test(`${weak.length} weak keys of distinct shapes are refused, ${strong.length} random ones accepted`, (t) => {
  t.ok(weak.length >= 40 && new Set(weak.map(([shape]) => shape)).size === weak.length, 'forty shapes or more');
  const passed = weak.filter(([, key]) => bootstrapKeyProblem(key) === undefined);
  t.same(passed, [], `refused ${weak.length - passed.length} of ${weak.length}`);
  const refused = strong.flatMap(([shape, key]) => {
    const problem = bootstrapKeyProblem(key);
    return problem === undefined ? [] : [[shape, key, problem]];
  });
  t.same(refused, [], `accepted ${strong.length - refused.length} of ${strong.length}`);
  t.end();
});
