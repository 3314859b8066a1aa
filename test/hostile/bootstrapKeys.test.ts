import { randomBytes } from 'node:crypto';
import t from 'tap';
import { assertBootstrapKeyUsable } from '../../src/auth/provisioning.js';
import { generateApiKey } from '../../src/auth/keys.js';
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
];

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
