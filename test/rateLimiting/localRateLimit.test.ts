import t from 'tap';
import { localRateLimit } from '../../src/http/admission/localRateLimit.js';

t.test('a fixed window per bucket, from its first request', async (t) => {
  let now = 1_000_000;
  const count = localRateLimit(2, 60_000, () => now);
  t.same(count('a'), { isExceeded: false, remaining: 1, ttlInSeconds: 60 });
  now += 10_500;
  t.same(count('a'), { isExceeded: false, remaining: 0, ttlInSeconds: 50 }, 'the window keeps its start');
  t.same(count('b'), { isExceeded: false, remaining: 1, ttlInSeconds: 60 }, 'another bucket has its own window');
  t.same(count('a'), { isExceeded: true, remaining: 0, ttlInSeconds: 50 }, 'past the limit');
  now += 49_500;
  t.same(count('a'), { isExceeded: false, remaining: 1, ttlInSeconds: 60 }, 'a new window once it ends');
});

t.test('the least recently used buckets are forgotten past 5,000', async (t) => {
  const count = localRateLimit(1, 60_000, () => 0);
  count('first');
  t.equal(count('first').isExceeded, true);
  for (let i = 0; i < 5000; i += 1) count(`other-${i}`);
  t.equal(count('first').isExceeded, false, 'forgotten, like @fastify/rate-limit LocalStore');
  t.equal(count('other-4999').isExceeded, true, 'a recent bucket is kept');
});
