import { randomBytes } from 'node:crypto';
import t from 'tap';
import { assertBootstrapKeyUsable } from '../../src/auth/provisioning.js';
import { bootstrapKeyProblem, generateApiKey, keyChecksum } from '../../src/auth/keys.js';
import { startServer } from '../../src/process/startServer.js';
import { textSink } from '../helpers/processes.js';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const randomText = (length: number) =>
  Array.from(randomBytes(length), (byte) => base62.charAt(byte % base62.length)).join('');

// Each of these started the service, and held every scope.
const guessable = [
  // The shape of keys issued before the checksum, but nothing random in it.
  `pets_${'a'.repeat(43)}`,
  `pets_${'0123456789'.repeat(5).slice(0, 43)}`,
  // 32 different characters, in order.
  'abcdefghijklmnopqrstuvwxyz012345',
  // pets_ and 33 characters: shorter than either format, and the prefix is public.
  `pets_${'abcdefgh'.repeat(5).slice(0, 33)}`,
  // The checksummed shape with a weak body: the checksum is public, so it proves nothing.
  withChecksum(`pets_${'a'.repeat(43)}`),
];

function withChecksum(body: string): string {
  return body + keyChecksum(body);
}

/** What an outside review started the service with (issue 63), and the pattern each refusal must name. */
const reviewed: [string, RegExp][] = [
  [`pets_${'q1w2e3r4t5'.repeat(4)}`, /a repeated block \("q1w2e3r4t5/],
  ['zaq12wsxcde34rfvbgt56yhnmju78ik,lo9', /a keyboard walk \("zaq12wsx/],
  ['qwertyuiopasdfghjklzxcvbnm1234567890', /dictionary words or common passwords \("qwertyuiop", "asdfghjkl"/],
  [`${'changeme'.repeat(4)}1234`, /a repeated block \("changemechangeme.*"1234"/],
  ['correct horse battery staple orange window mountain', /dictionary words .*"correct", "horse", "battery"/],
  ['correct-horse-battery-staple-orange-window', /dictionary words .*"correct", "horse"/],
  [withChecksum(`pets_${'a'.repeat(43)}`), /a repeated block \("aaaa/],
  [withChecksum(`pets_${'0123456789'.repeat(5).slice(0, 43)}`), /a repeated block|a sequence/],
  [withChecksum(`pets_Tr0ub4dor${'Tr0ub4dor'.repeat(4).slice(0, 34)}`), /too easy to guess/],
];

t.test('the reviewed weak keys are refused, naming why', (t) => {
  for (const [key, why] of reviewed) {
    const problem = bootstrapKeyProblem(key);
    t.match(problem, /^is too easy to guess: it is made of .*: about 10\^\d+ guesses, at least 10\^30 needed/, key);
    t.match(problem, why, `${key.slice(0, 20)}: names the pattern`);
  }
  t.end();
});

t.test('every generated key passes', (t) => {
  // A generated body (43 base62 characters) scores about 10^77, 47 orders of magnitude over the floor:
  // no chance arrangement of its characters comes near it, so more keys would prove nothing more. Three, not
  // twenty: each costs the estimator 0.2 s of CPU (measured), and the weak corpus's file judges four more.
  const refused = Array.from({ length: 3 }, generateApiKey).filter((key) => bootstrapKeyProblem(key) !== undefined);
  t.same(refused, [], 'none of 3 refused');
  t.end();
});

t.test('a guessable BOOTSTRAP_API_KEY of any shape stops the start, naming the variable', async (t) => {
  for (const key of guessable) {
    // Refused before any database is opened: none is configured that could be reached.
    const failure = await startServer(
      {
        LOG_LEVEL: 'silent',
        PORT: '0',
        METRICS_PORT: 'off',
        DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
        BOOTSTRAP_API_KEY: key,
      },
      textSink().stream,
    ).then(
      () => undefined,
      (error: unknown) => error as Error & { exitCode?: number },
    );
    t.equal(failure?.name, 'StartupError', key);
    t.equal(failure?.exitCode, 2);
    t.match(failure?.message, /^Invalid configuration: BOOTSTRAP_API_KEY is too easy to guess: /);
  }
});

t.test('random keys of every shape pass, the prefix aside', (t) => {
  for (const key of [
    generateApiKey(),
    `pets_${randomBytes(32).toString('base64url')}`,
    `pets_${randomText(33)}`,
    randomBytes(16).toString('hex'),
    randomBytes(24).toString('base64'),
  ])
    t.doesNotThrow(() => {
      assertBootstrapKeyUsable(key);
    }, key);
  t.end();
});
