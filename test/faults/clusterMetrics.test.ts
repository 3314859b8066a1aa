import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { generateApiKey } from '../../src/auth/keys.js';
import { freePort, loopback } from '../../lib/instances/network.js';
import { childPids, signal, spawnLogged, stopPid, waitUntil } from '../../lib/instances/processes.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { openBackend, postgresUnavailableReason } from '../helpers/databases.js';
import { scratchDir } from '../helpers/scratchSpace.js';

/**
 * Live, under `--cluster` with two workers: one worker killed with SIGKILL
 * and forked again must make no summed counter of the primary's scrape go
 * down, and the increase Prometheus computes between the scrapes before and
 * after (reset-aware, as rate() does) must be the requests made, not the
 * whole count of the surviving worker taken for new traffic.
 */

const key = generateApiKey();

/** Counter samples of a scrape (counters, and histograms' _bucket, _count and _sum), by series. */
function counterSamples(scrape: string): Map<string, number> {
  const counters = new Set<string>();
  for (const [, name, type] of scrape.matchAll(/^# TYPE (\S+) (counter|histogram)$/gm)) {
    if (type === 'counter') counters.add(name!);
    else for (const suffix of ['_bucket', '_count', '_sum']) counters.add(name! + suffix);
  }
  const samples = new Map<string, number>();
  for (const [, series, name, value] of scrape.matchAll(/^(([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{.*\})?) (\S+)$/gm))
    if (counters.has(name!)) samples.set(series!, Number(value));
  return samples;
}

/** The increase between two samples as rate() reads it: a drop is a reset, after which all of `after` is new. */
const increase = (before: number, after: number) => (after >= before ? after - before : after);

const unavailable = await postgresUnavailableReason();

/** src/cluster.ts stops the cluster when a worker dies younger than 5 s; a margin past it. */
const crashLoopWindowMs = 5_000 + 500;

t.test('a worker killed and forked again makes no summed counter drop', { skip: unavailable ?? false }, async (t) => {
  const backend = await openBackend('postgres');
  const databaseUrl = backend.env['DATABASE_URL']!;
  await backend.db.close();
  t.teardown(async () => {
    await backend.close().catch(() => undefined);
  });
  const folder = scratchDir('pets-cluster-');
  t.teardown(folder.remove);
  const logFile = join(folder.path, 'cluster.log');
  const [port, metricsPort] = [await freePort(), await freePort()];
  const origin = `http://${loopback}:${port}`;
  const metricsUrl = `http://${loopback}:${metricsPort}/metrics`;
  const primary = spawnLogged({
    command: process.execPath,
    args: ['--import', 'tsx', 'src/cluster.ts'],
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      DATABASE_URL: databaseUrl,
      HOST: loopback,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      WEB_CONCURRENCY: '2',
      BOOTSTRAP_API_KEY: key,
      LOG_LEVEL: 'warn',
    },
    logFile,
    cwd: repoRoot,
  });
  t.teardown(() => stopPid(primary, 'SIGTERM', 30_000));
  const wait = <T>(what: string, probe: () => Promise<T | undefined>) =>
    waitUntil({ what, timeoutMs: 120_000, pid: primary, logFile, intervalMs: 200 }, probe);
  const scrape = async () => {
    const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`scrape answered ${response.status}`);
    return response.text();
  };
  // The primary's children that are workers (tsx also runs an esbuild service beside them).
  const workers = () =>
    childPids(primary).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('server.ts');
      } catch {
        return false;
      }
    });
  let answered = 0;
  const request = async () => {
    const response = await fetch(`${origin}/v1/pets`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    // Only 200s are counted here: a loaded machine may shed some (503), counted under their own status.
    if (response.status === 200) answered += 1;
    return response.status;
  };
  const traffic = async (count: number) => {
    for (let sent = 0; sent < count; sent += 10)
      await Promise.all(Array.from({ length: Math.min(10, count - sent) }, request));
  };
  const listed = (samples: Map<string, number>) =>
    samples.get('http_server_request_duration_seconds_count{operation="listPets",method="GET",status_code="200"}') ?? 0;
  // The primary stops the cluster when a worker dies within 5 s of its fork (a crash loop): older than that.
  // A worker's age counts from when this test first saw its pid, which is after the primary forked it, so it
  // never overstates the age the primary judges by (the process start time from /proc did, by over a second).
  const firstSeen = new Map<number, number>();
  const settled = async () => {
    const pids = workers();
    for (const pid of pids) if (!firstSeen.has(pid)) firstSeen.set(pid, Date.now());
    if (pids.length !== 2) return undefined;
    const ages = pids.map((pid) => Date.now() - (firstSeen.get(pid) ?? Date.now()));
    return ages.every((age) => age > crashLoopWindowMs) && (await fetch(`${origin}/readyz`)).ok ? pids : undefined;
  };

  await wait('two workers ready', settled);
  const before = 400;
  await traffic(before);
  const first = counterSamples(await scrape());
  t.equal(listed(first), answered, `the sum counts the ${answered} requests both workers answered 200`);

  const answeredBefore = answered;
  const [victim] = workers();
  signal(victim!, 'SIGKILL');
  await wait('a new worker forked in its place, ready and answering scrapes', async () => {
    const pids = workers();
    if (pids.includes(victim!) || pids.length !== 2) return undefined;
    if ((await request()) !== 200) return undefined;
    return (await scrape()).includes('pets_ready 2') ? true : undefined;
  });
  // Fewer requests than the victim had counted: a drop of its share would show.
  await traffic(40);
  const second = counterSamples(await scrape());
  const after = answered - answeredBefore;

  const dropped = [...first].filter(([series, value]) => (second.get(series) ?? 0) < value);
  t.same(
    dropped.map(([series, value]) => `${series}: ${value} -> ${second.get(series) ?? 'gone'}`),
    [],
    'no summed counter went down',
  );
  t.equal(
    increase(listed(first), listed(second)),
    after,
    `Prometheus reads ${after} new requests between the scrapes, as many as were made`,
  );
});
