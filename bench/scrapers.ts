// npm run bench -- scrapers [--scrapers 20] [--seconds 10]: what scraping /metrics costs the API. The built
// server (embedded database, a scratch DATA_DIR) on 127.0.0.1 with its metrics listener on a free port;
// `scrapers` clients each GET /metrics again as soon as the last answer arrived, for `seconds`, while GET
// /healthz and then GET /v1/pets?limit=20 on the API port run on fresh connections every 20 ms, one at a time.
// Prints the median, 99th percentile and worst latency of each, quiet and under the scrapers, and the ratio of the
// medians (issue 70's bound: within 2x of quiet), and the scrapes answered. Scrapes that
// arrive during a render share it (src/observability/metricsServer.ts); measured before that, 20 scrapers
// took /healthz's median from 2.7 ms to 992 ms. Bounded: the scrapers stop after `seconds`.
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { generateApiKey } from '../src/auth/keys.js';
import { fmt, median, startServer } from './lib.js';

const { values: flags } = parseArgs({
  options: {
    scrapers: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '10' },
  },
});
const scrapers = Number(flags.scrapers);
const durationMs = Number(flags.seconds) * 1000;
const probeIntervalMs = 20;

/** A port nothing listens on now (the metrics listener's: the bench must know where to scrape). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A GET on a fresh connection, its body read: its latency in ms. */
function timedGet(url: string, headers: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers }, (response) => {
      response.resume();
      response.on('end', () => {
        resolve(performance.now() - started);
      });
    }).on('error', reject);
  });
}

/** One scraper: GET /metrics back to back until `until`; the scrapes it got answered. */
async function scrapeUntil(url: string, until: number): Promise<number> {
  let answered = 0;
  while (performance.now() < until) {
    await timedGet(url);
    answered++;
  }
  return answered;
}

interface Probes {
  healthz: number[];
  read: number[];
}

/** /healthz, then a page of pets, every 20 ms while `busy()` holds: the latencies of each, sorted. */
async function probeWhile(url: string, authorization: string, busy: () => boolean): Promise<Probes> {
  const probes: Probes = { healthz: [], read: [] };
  while (busy()) {
    probes.healthz.push(await timedGet(`${url}/healthz`));
    probes.read.push(await timedGet(`${url}/v1/pets?limit=20`, { authorization }));
    await sleep(probeIntervalMs);
  }
  return { healthz: probes.healthz.toSorted((a, b) => a - b), read: probes.read.toSorted((a, b) => a - b) };
}

const summary = (sorted: number[]) =>
  `median ${fmt(median(sorted), 1)} ms, p99 ${fmt(sorted[Math.floor(sorted.length * 0.99)] ?? 0, 1)} ms, ` +
  `max ${fmt(sorted.at(-1) ?? 0, 1)} ms (${sorted.length} probes)`;

const dataDir = mkdtempSync(join(tmpdir(), 'pet-store-scrapers-'));
const key = generateApiKey();
const metricsPort = await freePort();
const server = await startServer({
  name: 'ours',
  args: ['dist/server.js'],
  env: {
    DATA_DIR: dataDir,
    BOOTSTRAP_API_KEY: key,
    LOG_LEVEL: 'warn',
    DRAIN_DELAY_MS: '0',
    METRICS_PORT: String(metricsPort),
  },
  port: await freePort(),
  authorization: `Bearer ${key}`,
});
try {
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const authorization = `Bearer ${key}`;
  const quietUntil = performance.now() + Math.min(durationMs, 3000);
  const quiet = await probeWhile(server.url, authorization, () => performance.now() < quietUntil);
  const until = performance.now() + durationMs;
  const scraping = Promise.all(Array.from({ length: scrapers }, () => scrapeUntil(metricsUrl, until)));
  const loaded = await probeWhile(server.url, authorization, () => performance.now() < until);
  const scrapes = (await scraping).reduce((sum, count) => sum + count, 0);
  for (const [name, probe] of [
    ['/healthz', 'healthz'],
    ['GET /v1/pets?limit=20', 'read'],
  ] as const) {
    console.log(`${name}, quiet: ${summary(quiet[probe])}`);
    console.log(`${name}, ${scrapers} scrapers: ${summary(loaded[probe])}`);
    console.log(`${name}: median ${fmt(median(loaded[probe]) / median(quiet[probe]), 2)}x quiet (bound: 2x)`);
  }
  console.log(`scrapes answered in ${flags.seconds} s: ${scrapes} (${fmt(scrapes / (durationMs / 1000))} a second)`);
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
