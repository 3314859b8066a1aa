import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { Test } from 'tap';
import { freePort, loopback } from '../../lib/instances/network.js';
import { childPids, spawnLogged, stopPid, waitUntil } from '../../lib/instances/processes.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { generateApiKey } from '../../src/auth/keys.js';
import { scratchDir } from '../helpers/scratchSpace.js';

/** `npm start -- --cluster` as a process of its own, on 127.0.0.1 and free ports. */
export interface LiveCluster {
  primary: number;
  origin: string;
  logFile: string;
  key: string;
  /** The primary's scrape; throws unless it answers 200 within Prometheus's default scrape_timeout. */
  scrape(): Promise<string>;
  /** The worker processes' pids (tsx also runs an esbuild service beside them). */
  workers(): number[];
  wait<T>(what: string, probe: () => Promise<T | undefined>): Promise<T>;
  /** Waits until `count` workers answer and each is older than the crash-loop window; their pids. */
  settled(count: number): Promise<number[]>;
}

/** Prometheus's default scrape_timeout: what a scrape that answers later than this is worth. */
export const scrapeTimeoutMs = 10_000;

/** src/cluster.ts stops the cluster when a worker dies younger than 5 s; a margin past it. */
const crashLoopWindowMs = 5_000 + 500;

export async function startCluster(
  t: Test,
  options: { databaseUrl: string; workers: number; env?: Record<string, string> },
): Promise<LiveCluster> {
  const folder = scratchDir('pets-cluster-');
  t.teardown(folder.remove);
  const logFile = join(folder.path, 'cluster.log');
  const [port, metricsPort] = [await freePort(), await freePort()];
  const key = generateApiKey();
  const primary = spawnLogged({
    command: process.execPath,
    args: ['--import', 'tsx', 'src/cluster.ts'],
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      DATABASE_URL: options.databaseUrl,
      HOST: loopback,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      WEB_CONCURRENCY: String(options.workers),
      BOOTSTRAP_API_KEY: key,
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    logFile,
    cwd: repoRoot,
  });
  t.teardown(() => stopPid(primary, 'SIGTERM', 30_000));
  const workers = () =>
    childPids(primary).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('server.ts');
      } catch {
        return false;
      }
    });
  const wait = <T>(what: string, probe: () => Promise<T | undefined>) =>
    waitUntil({ what, timeoutMs: 120_000, pid: primary, logFile, intervalMs: 200 }, probe);
  const origin = `http://${loopback}:${port}`;
  // A worker's age counts from when this test first saw its pid, which is after the primary forked it, so it
  // never overstates the age the primary judges by.
  const firstSeen = new Map<number, number>();
  return {
    primary,
    origin,
    logFile,
    key,
    async scrape() {
      const response = await fetch(`http://${loopback}:${metricsPort}/metrics`, {
        signal: AbortSignal.timeout(scrapeTimeoutMs),
      });
      if (!response.ok) throw new Error(`scrape answered ${response.status}`);
      return response.text();
    },
    workers,
    wait,
    settled: (count) =>
      wait(`${count} workers ready`, async () => {
        const pids = workers();
        for (const pid of pids) if (!firstSeen.has(pid)) firstSeen.set(pid, Date.now());
        if (pids.length !== count) return undefined;
        const ages = pids.map((pid) => Date.now() - (firstSeen.get(pid) ?? Date.now()));
        return ages.every((age) => age > crashLoopWindowMs) && (await fetch(`${origin}/readyz`)).ok ? pids : undefined;
      }),
  };
}

export type Outcome = { status: number; message: string } | { error: string };

/**
 * GET `path` on a connection of its own (no keep-alive pool: each request
 * meets the listener afresh), given up after timeoutMs.
 */
export function requestOnce(cluster: LiveCluster, path: string, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = httpRequest(
      `${cluster.origin}${path}`,
      { agent: false, headers: { authorization: `Bearer ${cluster.key}` }, timeout: timeoutMs },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          let message = '';
          try {
            message = String((JSON.parse(body) as { message?: unknown }).message ?? '');
          } catch {
            // Not the Error object: the status says enough.
          }
          resolve({ status: response.statusCode ?? 0, message });
        });
        response.on('error', (error) => {
          resolve({ error: error.message });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', (error) => {
      resolve({ error: error.message });
    });
    request.end();
  });
}

/** Counter samples of a scrape (counters, and histograms' _bucket, _count and _sum), by series. */
export function counterSamples(scrape: string): Map<string, number> {
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

/** Series whose value in `after` is lower than in `before` (or gone), as "series: before -> after". */
export function droppedCounters(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...before]
    .filter(([series, value]) => (after.get(series) ?? 0) < value)
    .map(([series, value]) => `${series}: ${value} -> ${after.get(series) ?? 'gone'}`);
}
