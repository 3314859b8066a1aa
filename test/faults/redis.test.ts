import t from 'tap';
import { startRedis } from '../../lib/instances/index.js';
import { httpLimits } from '../../src/http/limits.js';
import { auth, call, percentile, privatePostgres, serve } from './harness.js';

/** Latencies (ms) of count sequential listings. */
async function latencies(api: string, count: number): Promise<{ times: number[]; statuses: Set<number> }> {
  const times: number[] = [];
  const statuses = new Set<number>();
  for (let n = 0; n < count; n += 1) {
    const started = performance.now();
    const answer = await call(`${api}/pets?limit=1`, { headers: auth });
    times.push(performance.now() - started);
    statuses.add(answer.status);
  }
  return { times, statuses };
}

t.test('Redis stalled (SIGSTOP) or killed: requests keep their latency within a bound', async (t) => {
  const { url } = await privatePostgres(t);
  const redis = await startRedis();
  t.teardown(() => redis.remove());
  const server = await serve(t, {
    DATABASE_URL: url,
    MIGRATE_ON_START: 'true',
    REDIS_URL: redis.url,
  });
  await latencies(server.api, 50);
  const normal = await latencies(server.api, 300);

  redis.pause();
  const stalled = await latencies(server.api, 300);
  redis.resume();
  await latencies(server.api, 50);

  await redis.kill();
  const killed = await latencies(server.api, 300);

  const p99 = (sample: { times: number[] }) => Math.round(percentile(sample.times, 99) * 10) / 10;
  const report = `p99 normal ${p99(normal)} ms, Redis stalled ${p99(stalled)} ms, Redis killed ${p99(killed)} ms (Redis timeout ${httpLimits.redisTimeoutMs} ms)`;
  t.comment(report);
  t.same([...stalled.statuses, ...killed.statuses], [200, 200], 'every request answered 200');
  // Generous bound for a loaded 2-core machine; without the timeout and the
  // breaker a stalled Redis costs every request up to 1 s.
  t.ok(p99(stalled) < p99(normal) + 250, `stalled: ${report}`);
  t.ok(p99(killed) < p99(normal) + 250, `killed: ${report}`);
});
