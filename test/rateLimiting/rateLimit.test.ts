import { randomInt } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import { startTestApp, testConfig, testLimits } from '../helpers/app.js';
import { matchesDeclaredHeader } from '../helpers/contract.js';

const redisUrl = process.env['TEST_REDIS_URL'] || 'redis://127.0.0.1:6379';

async function redisUnavailableReason(): Promise<string | undefined> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return `no Redis at ${redisUrl}: ${(error as Error).message}`;
  } finally {
    redis.disconnect();
  }
}

function remaining(header: unknown): number {
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(String(header));
  if (!match) throw new Error(`RateLimit header ${String(header)} is not "default";r=<n>;t=<n>`);
  return Number(match[1]);
}

t.test('each key has its own quota; past it, 429 with Retry-After and the RateLimit fields', async (t) => {
  const { app, db, auth } = await startTestApp(t, 'embedded', { RATE_LIMIT_MAX: 3, RATE_LIMIT_WINDOW_SECONDS: 600 });
  const seen: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const response = await app.inject({ method: 'GET', url: '/v1/pets', headers: auth });
    t.equal(response.statusCode, 200);
    t.equal(response.headers['ratelimit-policy'], '"default";q=3;w=600');
    t.ok(matchesDeclaredHeader('RateLimit', response.headers['ratelimit']), 'RateLimit matches its declaration');
    t.ok(
      matchesDeclaredHeader('RateLimitPolicy', response.headers['ratelimit-policy']),
      'RateLimit-Policy matches its declaration',
    );
    seen.push(remaining(response.headers['ratelimit']));
  }
  t.same(seen, [2, 1, 0], 'remaining counts down');

  const limited = await app.inject({ method: 'GET', url: '/v1/pets', headers: auth });
  t.equal(limited.statusCode, 429);
  t.same(limited.json(), { code: 'rate_limited', message: limited.json().message, status: 429 });
  t.match(limited.json().message, /retry in \d+ seconds/);
  const retryAfter = Number(limited.headers['retry-after']);
  t.ok(retryAfter > 0 && retryAfter <= 600, `Retry-After ${retryAfter} is within the window`);
  t.ok(matchesDeclaredHeader('RetryAfter', limited.headers['retry-after']));
  t.equal(remaining(limited.headers['ratelimit']), 0);
  t.equal(limited.headers['ratelimit-policy'], '"default";q=3;w=600');

  const other = generateApiKey();
  await insertApiKey(db, toStoredKey('other', other));
  const otherResponse = await app.inject({
    method: 'GET',
    url: '/v1/pets',
    headers: { authorization: `Bearer ${other}` },
  });
  t.equal(otherResponse.statusCode, 200, 'another key has its own quota');

  t.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'probes are not limited');
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
});

t.test('rejected keys count against the client address, so guessing is slowed', async (t) => {
  const { app, db, auth } = await startTestApp(t, 'embedded', { RATE_LIMIT_MAX: 3, API_KEY_CACHE_SECONDS: 60 });
  const elsewhere = { method: 'GET' as const, url: '/v1/pets', headers: auth, remoteAddress: '192.0.2.200' };
  t.equal((await app.inject(elsewhere)).statusCode, 200, 'the key is used once, from another address');
  for (let i = 0; i < 3; i += 1) {
    const guess = await app.inject({
      method: 'GET',
      url: '/v1/pets',
      headers: { authorization: `Bearer ${generateApiKey()}` },
    });
    t.equal(guess.statusCode, 401, `guess ${i + 1} is refused`);
    t.equal(remaining(guess.headers['ratelimit']), 2 - i);
  }
  const fourth = await app.inject({
    method: 'GET',
    url: '/v1/pets',
    headers: { authorization: `Bearer ${generateApiKey()}` },
  });
  t.equal(fourth.statusCode, 429, 'the address is out of attempts: no more key checks');
  const noKey = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  t.equal(noKey.statusCode, 429, 'unauthenticated requests share the address quota');
  const valid = await app.inject({ method: 'GET', url: '/v1/pets', headers: auth });
  t.equal(valid.statusCode, 200, 'a remembered valid key is counted on its own quota, not the address');
  const fresh = generateApiKey();
  await insertApiKey(db, toStoredKey('fresh', fresh));
  const unremembered = await app.inject({
    method: 'GET',
    url: '/v1/pets',
    headers: { authorization: `Bearer ${fresh}` },
  });
  t.equal(unremembered.statusCode, 429, 'a key not remembered is not looked up from an address out of attempts');
});

t.test('X-Forwarded-For from a client that is not a trusted proxy picks no bucket', async (t) => {
  const { app } = await startTestApp(t, 'embedded', { RATE_LIMIT_MAX: 3, TRUST_PROXY: '10.0.0.1' });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i += 1) {
    const guess = await app.inject({
      method: 'GET',
      url: '/v1/pets',
      remoteAddress: '192.0.2.7',
      headers: { authorization: `Bearer ${generateApiKey()}`, 'x-forwarded-for': `198.51.100.${i}` },
    });
    statuses.push(guess.statusCode);
  }
  t.same(statuses, [401, 401, 401, 429], 'one address, whatever X-Forwarded-For says');
  const viaProxy = await app.inject({
    method: 'GET',
    url: '/v1/pets',
    remoteAddress: '10.0.0.1',
    headers: { authorization: `Bearer ${generateApiKey()}`, 'x-forwarded-for': '198.51.100.9' },
  });
  t.equal(viaProxy.statusCode, 401, 'the trusted proxy names the client, which has its own quota');
});

const noRedis = await redisUnavailableReason();

t.test('with REDIS_URL, instances share one limit', { skip: noRedis ?? false }, async (t) => {
  // A generous Redis timeout: on a loaded machine the 50 ms default can expire and the
  // limiter then counts in-process (its own test is redisBreaker.test.ts); here we test sharing.
  const config = {
    RATE_LIMIT_MAX: 4,
    RATE_LIMIT_WINDOW_SECONDS: 600,
    REDIS_URL: redisUrl,
  };
  // Redis on a loaded test machine may take longer than the 50 ms a request waits in production.
  const limits = { ...testLimits, redisTimeoutMs: 5000 };
  // A fresh key per run: its counter in Redis is new, whatever earlier runs left.
  const { app: first, db, auth } = await startTestApp(t, 'embedded', config, { limits });
  const second = await buildApp({ ...testConfig, ...config }, { db, logger: false, limits });
  t.teardown(() => second.close());

  // A client address of its own per run too: Redis keeps the address bucket (which counts a key's
  // first lookup) for the whole window, across runs of the suite (CI runs it on three Node.js lines).
  const remoteAddress = `10.${randomInt(256)}.${randomInt(256)}.${1 + randomInt(254)}`;
  const statuses: number[] = [];
  for (const app of [first, second, first, second, first, second]) {
    statuses.push((await app.inject({ method: 'GET', url: '/v1/pets', headers: auth, remoteAddress })).statusCode);
  }
  t.same(statuses, [200, 200, 200, 200, 429, 429], 'four requests in all, whichever instance served them');

  const alone = await startTestApp(t, 'embedded', { RATE_LIMIT_MAX: 4, RATE_LIMIT_WINDOW_SECONDS: 600 });
  const local: number[] = [];
  for (let i = 0; i < 3; i += 1)
    local.push((await alone.app.inject({ method: 'GET', url: '/v1/pets', headers: alone.auth })).statusCode);
  t.same(local, [200, 200, 200], 'without REDIS_URL the counter is per process');
});
