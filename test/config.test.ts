import t from 'tap';
import { ConfigError, loadConfig } from '../src/config.js';
import { runEntry } from './helpers/processes.js';

t.test('defaults', async (t) => {
  const config = loadConfig({});
  t.match(config, {
    PORT: 3000,
    HOST: '127.0.0.1',
    DATA_DIR: './data',
    LOG_LEVEL: 'info',
    BODY_LIMIT_BYTES: 65536,
    RESPONSE_VALIDATION: true,
    MIGRATE_ON_START: false,
  });
  t.equal(config.DATABASE_URL, undefined, 'no DATABASE_URL means the embedded database');
  t.equal(config.BOOTSTRAP_API_KEY, undefined);
});

t.test('values are read and typed', async (t) => {
  const config = loadConfig({ PORT: '8080', DATABASE_URL: 'postgres://u@h/db', MIGRATE_ON_START: 'true', LOG_LEVEL: 'debug', DATA_DIR: '' });
  t.equal(config.PORT, 8080);
  t.equal(config.DATABASE_URL, 'postgres://u@h/db');
  t.equal(config.MIGRATE_ON_START, true);
  t.equal(config.DATA_DIR, './data', 'an empty value counts as unset');
});

const badValues: Array<[Record<string, string>, RegExp]> = [
  [{ PORT: 'abc' }, /PORT must be integer/],
  [{ PORT: '70000' }, /PORT must be <= 65535/],
  [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
  [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must match/],
  [{ BOOTSTRAP_API_KEY: 'short' }, /BOOTSTRAP_API_KEY must NOT have fewer than 20 characters/],
  [{ BOOTSTRAP_API_KEY: 'has spaces in it, which cannot be sent' }, /BOOTSTRAP_API_KEY must match/],
  [{ MIGRATE_ON_START: 'sometimes' }, /MIGRATE_ON_START must be boolean/],
  [{ BODY_LIMIT_BYTES: '10' }, /BODY_LIMIT_BYTES must be >= 1024/],
];
for (const [env, message] of badValues) {
  t.test(`rejects ${JSON.stringify(env)}`, async (t) => {
    t.throws(() => loadConfig(env), ConfigError);
    t.throws(() => loadConfig(env), { message });
  });
}

t.test('secrets are not echoed in the message', async (t) => {
  try {
    loadConfig({ BOOTSTRAP_API_KEY: 'tooshort!', DATABASE_URL: 'mysql://user:secret@host/db' });
    t.fail('should have thrown');
  } catch (error) {
    t.match((error as Error).message, /BOOTSTRAP_API_KEY/);
    t.notMatch((error as Error).message, /tooshort!|secret/);
  }
});

t.test('the server refuses to start on a bad value, naming it', async (t) => {
  const result = await runEntry('src/server.ts', [], { PORT: 'not-a-port', DATA_DIR: '/nonexistent/never-created' });
  t.equal(result.code, 2);
  t.match(result.stderr, /PORT must be integer/);
});
