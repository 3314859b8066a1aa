import type { FastifyBaseLogger } from 'fastify';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import { createBreakerStore, type Count, type CounterStore } from '../../src/http/admission/rateLimitStore.js';

/** A Redis stand-in whose eval hangs (a stalled server) until answering is switched on. */
function fakeRedis() {
  const state = { answering: false, calls: 0 };
  const redis = {
    eval: () => {
      state.calls += 1;
      return state.answering ? Promise.resolve([7, 1000]) : new Promise(() => undefined);
    },
  } as unknown as Redis;
  return { redis, state };
}

function fakeLog() {
  const lines: Array<{ level: string; msg: string }> = [];
  const log = {
    warn: (_fields: unknown, msg: string) => lines.push({ level: 'warn', msg }),
    info: (_fields: unknown, msg: string) => lines.push({ level: 'info', msg }),
  } as unknown as FastifyBaseLogger;
  return { log, lines };
}

function count(store: CounterStore, key: string): Promise<Count> {
  return new Promise((resolve, reject) => {
    store.incr(
      key,
      (error, result) => {
        if (error || !result) reject(error ?? new Error('no result'));
        else resolve(result);
      },
      60_000,
      100,
    );
  });
}

t.test('a stalled Redis: each call gives up after the timeout, then the breaker counts in-process', async (t) => {
  const { redis, state } = fakeRedis();
  const { log, lines } = fakeLog();
  // The breaker's clock is the test's: openMs passes when the test says, however slow the machine.
  const clock = { ms: 0 };
  const store = createBreakerStore({
    redis,
    nameSpace: 'test:',
    timeoutMs: 20,
    failuresToOpen: 3,
    openMs: 100,
    log,
    now: () => clock.ms,
  });

  const counted = [];
  for (let request = 0; request < 3; request += 1) counted.push((await count(store, 'ip:a')).current);
  t.same(counted, [1, 2, 3], 'a request whose Redis call timed out is counted in this process');
  t.equal(state.calls, 3);
  t.same(
    lines.map((line) => line.level),
    ['warn'],
    'the breaker opening is logged once',
  );

  for (let request = 0; request < 20; request += 1) await count(store, 'ip:a');
  t.equal(state.calls, 3, 'while open, Redis is not asked');
  t.equal((await count(store, 'ip:a')).current, 24, 'and the count goes on in-process');

  state.answering = true;
  clock.ms += 99;
  t.equal((await count(store, 'ip:a')).current, 25, 'until openMs has passed');
  t.equal(state.calls, 3, 'Redis is still not asked');
  clock.ms += 1;
  t.same(await count(store, 'ip:a'), { current: 7, ttl: 1000 }, 'after openMs one request asks Redis again');
  t.equal(lines.length, 2);
  t.match(lines[1], { level: 'info', msg: /answers again/ }, 'closing is logged once');
  await count(store, 'ip:a');
  t.equal(state.calls, 5, 'closed again: every request asks Redis');
  t.equal(lines.length, 2);
});

const redisUrl = process.env['TEST_REDIS_URL'] || 'redis://127.0.0.1:6379';

/** A connected client, or why there is none. */
async function connectRedis(): Promise<Redis | string> {
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    return redis;
  } catch (error) {
    redis.disconnect();
    return `no Redis at ${redisUrl}: ${(error as Error).message}`;
  }
}

const connected = await connectRedis();

t.test(
  'a counter left without an expiry in Redis gets one back, and a new window',
  { skip: typeof connected === 'string' ? connected : false },
  async (t) => {
    if (typeof connected === 'string') return;
    const redis = connected;
    // A prefix of this run's own: the test never meets a counter another run or the service left.
    const nameSpace = `test-expiry-${randomUUID()}:`;
    t.teardown(async () => {
      await redis.del(`${nameSpace}key:a`);
      redis.disconnect();
    });
    const store = createBreakerStore({ redis, nameSpace, timeoutMs: 5000, log: fakeLog().log });

    for (let request = 0; request < 3; request += 1) await count(store, 'key:a');
    t.ok((await redis.pttl(`${nameSpace}key:a`)) > 0, 'a window has an expiry');
    t.equal(await redis.persist(`${nameSpace}key:a`), 1, 'the expiry removed, as a restore or PERSIST leaves it');

    const next = await count(store, 'key:a');
    t.same(next, { current: 1, ttl: 60_000 }, 'the next request starts a new window');
    const pttl = await redis.pttl(`${nameSpace}key:a`);
    t.ok(pttl > 0 && pttl <= 60_000, `the counter expires again (PTTL ${pttl} ms)`);
    t.equal((await count(store, 'key:a')).current, 2, 'and counts on in it');
  },
);
