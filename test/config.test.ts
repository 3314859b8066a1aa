import { readFileSync } from 'node:fs';
import t from 'tap';
import { configReferenceMarkdown } from '../generators/configReference.js';
import { databaseOptionsOf, directDatabaseOptionsOf } from '../src/config/databaseOptions.js';
import { ConfigError, loadConfig } from '../src/config/load.js';
import { configSchema } from '../src/config/schema.js';
import { runEntry } from './helpers/processes.js';

t.test('defaults', async (t) => {
  const config = loadConfig({});
  t.match(config, {
    PORT: 3000,
    HOST: '127.0.0.1',
    DATA_DIR: './data',
    LOG_LEVEL: 'info',
    MIGRATE_ON_START: false,
  });
  t.equal(config.DATABASE_URL, undefined, 'no DATABASE_URL means the embedded database');
  t.equal(config.BOOTSTRAP_API_KEY, undefined);
});

t.test('values are read and typed', async (t) => {
  const config = loadConfig({
    PORT: '8080',
    DATABASE_URL: 'postgres://u@h/db',
    MIGRATE_ON_START: 'true',
    LOG_LEVEL: 'debug',
    DATA_DIR: '',
  });
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
  [{ BOOTSTRAP_API_KEY: 'short' }, /BOOTSTRAP_API_KEY must NOT have fewer than 32 characters/],
  [{ BOOTSTRAP_API_KEY: 'has spaces in it, which cannot be sent' }, /BOOTSTRAP_API_KEY must match/],
  [{ MIGRATE_ON_START: 'sometimes' }, /MIGRATE_ON_START must be boolean/],
  [{ DATABASE_POOL_SIZE: '0' }, /DATABASE_POOL_SIZE must be >= 1/],
  [{ TRUST_PROXY: 'true' }, /TRUST_PROXY=true would let any client choose its address.*addresses or CIDRs/],
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

const primary = 'postgres://pets:secret@pgbouncer:6432/pets';
const direct = 'postgres://pets:secret@db-primary:5432/pets';

t.test('pooler and replica settings', async (t) => {
  const defaults = loadConfig({});
  t.match(defaults, {
    DATABASE_STATEMENTS: 'named',
    REPLICA_MAX_LAG_SECONDS: 5,
    DRAIN_DELAY_MS: 10000,
  });
  t.throws(() => loadConfig({ DATABASE_STATEMENTS: 'prepared' }), {
    message: /DATABASE_STATEMENTS must be one of named, unnamed/,
  });
  const options = databaseOptionsOf(
    loadConfig({
      DATABASE_URL: primary,
      DATABASE_STATEMENTS: 'unnamed',
      DATABASE_READ_URL: 'postgres://r1:5432/pets, postgres://r2:5432/pets',
    }),
  );
  t.match(options, {
    url: primary,
    statements: 'unnamed',
    queryTimeoutMs: 10000,
    replicas: { urls: ['postgres://r1:5432/pets', 'postgres://r2:5432/pets'], maxLagSeconds: 5 },
  });
  t.notOk('replicas' in databaseOptionsOf(loadConfig({ DATABASE_URL: primary })), 'no replicas unless configured');
});

t.test('replica and direct URLs need DATABASE_URL, and are not echoed', async (t) => {
  t.throws(() => loadConfig({ DATABASE_READ_URL: direct }), { message: /DATABASE_READ_URL needs DATABASE_URL/ });
  t.throws(() => loadConfig({ DATABASE_DIRECT_URL: direct }), { message: /DATABASE_DIRECT_URL needs DATABASE_URL/ });
  try {
    loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'mysql://user:secret@r1/pets' });
    t.fail('should have thrown');
  } catch (error) {
    t.match((error as Error).message, /DATABASE_READ_URL must match/);
    t.notMatch((error as Error).message, /secret/);
  }
});

t.test('API key changes are heard on a direct connection, never through a transaction pooler', async (t) => {
  const pooled = { DATABASE_URL: primary, DATABASE_STATEMENTS: 'unnamed' };
  t.match(databaseOptionsOf(loadConfig({ DATABASE_URL: primary })), { keyChanges: { url: primary } });
  t.notOk('keyChanges' in databaseOptionsOf(loadConfig(pooled)), 'a transaction pooler delivers no notification');
  t.match(databaseOptionsOf(loadConfig({ ...pooled, DATABASE_DIRECT_URL: direct })), { keyChanges: { url: direct } });
  t.match(databaseOptionsOf(loadConfig({ DATABASE_URL: primary, DATABASE_DIRECT_URL: direct })), {
    keyChanges: { url: direct },
  });
  t.notOk('keyChanges' in directDatabaseOptionsOf(loadConfig({ DATABASE_URL: primary }), 'administration'));
});

t.test('migrations never go through a transaction pooler', async (t) => {
  const pooled = { DATABASE_URL: primary, DATABASE_STATEMENTS: 'unnamed' };
  t.throws(() => loadConfig({ ...pooled, MIGRATE_ON_START: 'true' }), {
    message:
      /MIGRATE_ON_START=true with DATABASE_STATEMENTS=unnamed \(a transaction pooler\) needs DATABASE_DIRECT_URL/,
  });
  t.throws(() => directDatabaseOptionsOf(loadConfig(pooled), 'migrations'), {
    message: /needs DATABASE_DIRECT_URL/,
  });
  t.match(directDatabaseOptionsOf(loadConfig(pooled), 'administration'), { url: primary, statements: 'unnamed' });
  const withDirect = loadConfig({ ...pooled, MIGRATE_ON_START: 'true', DATABASE_DIRECT_URL: direct });
  t.match(directDatabaseOptionsOf(withDirect, 'migrations'), { url: direct, poolSize: 1 });
  t.match(directDatabaseOptionsOf(withDirect, 'administration'), { url: direct });
  t.notOk('queryTimeoutMs' in directDatabaseOptionsOf(withDirect, 'migrations'), 'a migration may take long');
  t.match(directDatabaseOptionsOf(loadConfig({ DATABASE_URL: direct }), 'migrations'), { url: direct });
});

// A budget that makes each new setting argue for its place; the 26th is the
// load-shedding threshold, which depends on the machine and on what clients wait.
t.test('at most 26 settings, each saying what it is for', async (t) => {
  const settings = Object.entries(configSchema.properties);
  t.ok(settings.length <= 26, `${settings.length} settings`);
  for (const [name, schema] of settings) {
    t.ok((schema.description ?? '').length >= 40, `${name} has a description`);
  }
});

t.test('docs/configuration.md is the reference the schema makes', async (t) => {
  const committed = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
  t.equal(committed, configReferenceMarkdown(), "docs/configuration.md is stale: run 'npm run generate' and commit it");
  for (const name of Object.keys(configSchema.properties)) {
    t.match(committed, `| \`${name}\` |`, `${name} has a row`);
  }
});
