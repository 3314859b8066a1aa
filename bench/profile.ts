// tsx bench/profile.ts <list20|list100|getPet|createPet> [seconds] [noseed]: one server (node --cpu-prof
// dist/server.js, pinned like the bench) under that load; prints its CPU until the first 200 and per request,
// and the path of the .cpuprofile (bench/results/profiles/). PROFILE_ENV={"NAME":"value"} adds settings;
// PROFILE_ENTRY=dist-before/server.js profiles another build of ours; PROFILE_SERVER=bare profiles ../shared/peers/fastify-bare instead, PROFILE_SERVER=sameWork (or
// sameWork:<features>) bench/sameWork/server.mjs, to compare the profiles.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '../lib/repoRoot.js';
import {
  baselineSpec,
  cpuSeconds,
  parseBaseline,
  storeBenchKey,
  benchDatabase,
  databasePlacement,
  namedScenarios,
  drive,
  pinSelf,
  recreateDatabase,
  seedPets,
  startServer,
  type Scenario,
} from './lib.js';

const [which = 'getPet', secondsText = '8', skipSeed] = process.argv.slice(2);
const key = `bench_${randomBytes(24).toString('base64url')}`;
const authorization = `Bearer ${key}`;
const urls = await benchDatabase();
pinSelf();
let maxId = 10000;
// noseed reuses the last run's database: only on a running server (BENCH_DATABASE_URL, BENCH_SHARED_POSTGRES).
if (skipSeed !== 'noseed' || !databasePlacement.includes('unpinned')) {
  await recreateDatabase(urls);
  maxId = await seedPets(urls.bench, 10000);
}
const scenarios: Record<string, Scenario> = namedScenarios(maxId);
const scenario = scenarios[which];
if (!scenario) throw new Error(`scenario: one of ${Object.keys(scenarios).join(', ')}`);
const dir = join(repoRoot, 'bench/results/profiles');
mkdirSync(dir, { recursive: true });
const before = new Set(readdirSync(dir));
const base = parseBaseline(process.env['PROFILE_SERVER']);
if (base) await storeBenchKey(urls.bench, key);
// PROFILE_PORT: two profiles at once (two builds under the same machine load), each on its own port.
const profilePort = Number(process.env['PROFILE_PORT'] ?? 3190);
const baseSpec = base && baselineSpec(base.kind, { databaseUrl: urls.bench, key, port: profilePort, ...base });
const server = await startServer({
  name: baseSpec ? baseSpec.name : 'ours',
  args: [
    '--cpu-prof',
    `--cpu-prof-dir=${dir}`,
    ...(baseSpec ? baseSpec.args : [process.env['PROFILE_ENTRY'] ?? 'dist/server.js']),
  ],
  env: {
    DATABASE_URL: urls.bench,
    BOOTSTRAP_API_KEY: key,
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000',
    // Stopped by SIGTERM: no drain delay, or it is killed before it writes its profile.
    DRAIN_DELAY_MS: '0',
    // A baseline's own settings win (the bare peer's database is its own).
    ...baseSpec?.env,
    ...(process.env['PROFILE_ENV'] ? (JSON.parse(process.env['PROFILE_ENV']) as Record<string, string>) : {}),
  },
  port: profilePort,
  cores: '1',
  authorization,
});
process.stderr.write(
  `cold start ${server.coldStartMs.toFixed(0)} ms, CPU until then ${(cpuSeconds(server.pid) * 1000).toFixed(0)} ms\n`,
);
// PROFILE_WARMUP=<seconds> of load first, unmeasured (the JIT needs it); profileSummary.ts then reads the rest.
const warmupSeconds = Number(process.env['PROFILE_WARMUP'] ?? 0);
if (warmupSeconds > 0) await drive(server, scenario, { seconds: warmupSeconds, connections: 20, authorization });
if (Number(secondsText) > 0) {
  const sample = await drive(server, scenario, { seconds: Number(secondsText), connections: 20, authorization });
  process.stderr.write(
    `${which}: ${sample.rps.toFixed(0)} req/s, ${sample.cpuUsPerRequest.toFixed(1)} µs CPU/req, ${sample.requests} requests\n`,
  );
}
await server.stop();
await sleep(300);
const made = readdirSync(dir).filter((name) => !before.has(name));
process.stdout.write(`${made.map((name) => join(dir, name)).join('\n')}\n`);
process.exit(0);
