import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import pg from 'pg';
import { postgresBin, startPostgres } from '../lib/instances/postgres.js';
import { processTree, statFields } from '../lib/instances/processes.js';
import { repoRoot } from '../lib/repoRoot.js';

// ---------------------------------------------------------------- processes

const clockTicksPerSecond = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** utime + stime of the process tree, in seconds. */
export function cpuSeconds(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    const fields = statFields(pid);
    // utime (field 14) and stime (15).
    if (fields) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / clockTicksPerSecond;
}

/**
 * CPU seconds of a server that forks a process per connection (PostgreSQL):
 * its live process tree, plus what its children that have exited used
 * (the root's cutime + cstime). The difference of two readings is the CPU
 * the server spent between them, connections that came and went included.
 */
export function serverCpuSeconds(root: number): number {
  // cutime (field 16) and cstime (17).
  const fields = statFields(root);
  const reaped = fields ? Number(fields[13]) + Number(fields[14]) : 0;
  return cpuSeconds(root) + reaped / clockTicksPerSecond;
}

/** VmRSS and VmHWM of the process tree, in MiB. */
export function memoryMiB(root: number): { rss: number; hwm: number } {
  let rss = 0;
  let hwm = 0;
  for (const pid of processTree(root)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      hwm += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    } catch {
      // The process ended between listing and reading.
    }
  }
  return { rss, hwm };
}

// Taken before pinning: availableParallelism() follows this process's affinity.
export const coreCount = availableParallelism();
const hasTaskset = spawnSync('taskset', ['--version']).status === 0 && coreCount >= 2;

/**
 * Keeps the load generator (this process, all its threads) on core 0 so the
 * server gets core 1 to itself (PostgreSQL: see benchDatabase).
 */
export function pinSelf(): string {
  if (!hasTaskset) return 'not pinned (taskset missing or a single core)';
  spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)]);
  return `load generator on core 0, server on core 1, ${databasePlacement}`;
}

/** Lets the load generator use every core again. */
export function unpinSelf(): void {
  if (hasTaskset) spawnSync('taskset', ['-a', '-p', '-c', `0-${coreCount - 1}`, String(process.pid)]);
}

export interface Server {
  name: string;
  pid: number;
  url: string;
  coldStartMs: number;
  stop(): Promise<void>;
  /** The last 4,000 characters the server wrote to stderr. */
  stderr(): string;
}

export interface ServerSpec {
  name: string;
  /** Node arguments: the script and its arguments. */
  args: string[];
  env: Record<string, string>;
  port: number;
  /** Core list for taskset, or undefined to let the scheduler place it. */
  cores?: string | undefined;
  authorization: string;
}

async function firstOk(url: string, authorization: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderr()}`);
    try {
      const response = await fetch(url, { headers: { authorization } });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(5);
  }
  throw new Error(`server did not answer 200 at ${url} within 30 s: ${stderr()}`);
}

/** Spawns a server and waits for its first 200 on GET /v1/pets?limit=1: that wait is its cold start. */
export async function startServer(spec: ServerSpec): Promise<Server> {
  const command = spec.cores && hasTaskset ? 'taskset' : process.execPath;
  const args = spec.cores && hasTaskset ? ['-c', spec.cores, process.execPath, ...spec.args] : spec.args;
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOST: '127.0.0.1',
      PORT: String(spec.port),
      // Metrics on (the default) on a free port: several servers run at once.
      METRICS_PORT: '0',
      ...spec.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${spec.port}`;
  await firstOk(`${url}/v1/pets?limit=1`, spec.authorization, child, () => errors);
  const coldStartMs = performance.now() - started;
  return {
    name: spec.name,
    pid: child.pid!,
    url,
    coldStartMs,
    stderr: () => errors,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => {
          resolve();
        });
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

// ---------------------------------------------------------------- load

export interface Scenario {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  body?: string;
  /** Picks a new path for every request (random ids). */
  pathFor?: () => string;
  /** Headers sent with every request, besides Authorization and Content-Type. */
  headers?: Record<string, string>;
  /** Headers made anew for every request (a fresh Idempotency-Key). */
  headersFor?: () => Record<string, string>;
  /** The status every answer must have; default: any 2xx. */
  expectStatus?: number;
}

/** The four loads of bench/profile.ts and bench/variants.ts, by short name; getPet reads random ids up to maxId. */
export function namedScenarios(maxId: number): Record<'list20' | 'list100' | 'getPet' | 'createPet', Scenario> {
  return {
    list20: { name: 'list20', path: '/v1/pets' },
    list100: { name: 'list100', path: '/v1/pets?status=available&limit=100' },
    getPet: { name: 'getPet', path: '/v1/pets/1', pathFor: () => `/v1/pets/${1 + Math.floor(Math.random() * maxId)}` },
    createPet: {
      name: 'createPet',
      method: 'POST',
      path: '/v1/pets',
      body: JSON.stringify({ name: 'Bench', categoryId: 7, status: 'pending' }),
    },
  };
}

export interface Sample {
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerRequest: number;
  rssMiB: number;
  requests: number;
  failures: number;
}

export async function drive(
  server: Server,
  scenario: Scenario,
  options: { seconds: number; connections: number; authorization: string },
): Promise<Sample> {
  const headers: Record<string, string> = { authorization: options.authorization, ...scenario.headers };
  if (scenario.body !== undefined) headers['content-type'] = 'application/json';
  const perRequest = (req: autocannon.Request): autocannon.Request => ({
    ...req,
    ...(scenario.pathFor ? { path: scenario.pathFor() } : {}),
    ...(scenario.headersFor ? { headers: { ...headers, ...scenario.headersFor() } } : {}),
  });
  const request: autocannon.Request = {
    method: scenario.method ?? 'GET',
    path: scenario.path,
    headers,
    ...(scenario.body !== undefined ? { body: scenario.body } : {}),
    ...(scenario.pathFor || scenario.headersFor ? { setupRequest: perRequest } : {}),
  };
  let rssMiB = 0;
  const sampler = setInterval(() => {
    rssMiB = Math.max(rssMiB, memoryMiB(server.pid).rss);
  }, 500);
  const cpuBefore = cpuSeconds(server.pid);
  // What autocannon returns without a callback is a promise and its event emitter at once (its types say promise only).
  const run = autocannon({
    url: server.url,
    connections: options.connections,
    duration: options.seconds,
    requests: [request],
  }) as Promise<autocannon.Result> & { on(event: 'response', listener: ResponseListener): unknown };
  // autocannon's own percentiles are whole milliseconds (its histogram's
  // smallest unit): a p99 of 7 against 9 ms could be 7.9 against 8.1. Each
  // response's time, as autocannon measures it, is kept here instead.
  const latenciesMs: number[] = [];
  run.on('response', (_client, _status, _bytes, responseTimeMs) => {
    latenciesMs.push(responseTimeMs);
  });
  const result = await run;
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  clearInterval(sampler);
  const requests = result.requests.total;
  return {
    rps: requests / result.duration,
    p50: percentile(latenciesMs, 0.5),
    p99: percentile(latenciesMs, 0.99),
    cpuUsPerRequest: requests > 0 ? (cpu * 1e6) / requests : Number.NaN,
    rssMiB,
    requests,
    failures: result.errors + unexpectedAnswers(result, scenario.expectStatus),
  };
}

/** autocannon's 'response' event: the response time is in milliseconds, with a fraction. */
type ResponseListener = (client: unknown, status: number, bytes: number, responseTimeMs: number) => void;

/** The nearest-rank percentile (q in 0..1) of the values, NaN for none. */
function percentile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

/** Answers without the expected status (any non-2xx when none is expected). */
function unexpectedAnswers(result: autocannon.Result, expectStatus: number | undefined): number {
  if (expectStatus === undefined) return result.non2xx;
  const stats = result.statusCodeStats as Partial<Record<string, { count: number }>>;
  const answered = Object.values(stats).reduce((sum, stat) => sum + (stat?.count ?? 0), 0);
  return answered - (stats[String(expectStatus)]?.count ?? 0);
}

export function median(values: number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export interface Summary {
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerRequest: number;
  rssMiB: number;
  failures: number;
}

export function summarize(samples: Sample[]): Summary {
  return {
    rps: median(samples.map((s) => s.rps)),
    p50: median(samples.map((s) => s.p50)),
    p99: median(samples.map((s) => s.p99)),
    cpuUsPerRequest: median(samples.map((s) => s.cpuUsPerRequest)),
    rssMiB: Math.max(...samples.map((s) => s.rssMiB)),
    failures: samples.reduce((sum, s) => sum + s.failures, 0),
  };
}

/**
 * Runs the servers one after the other, round after round, so that drift in
 * a noisy machine hits every server alike; medians over rounds.
 */
export async function interleaved(
  servers: Server[],
  scenarioOrPerServer: Scenario | Scenario[],
  options: LoadOptions,
  log: (line: string) => void,
): Promise<Summary[]> {
  return (await interleavedRounds(servers, scenarioOrPerServer, options, log)).map(summarize);
}

export interface LoadOptions {
  rounds: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  authorization: string;
}

/** As interleaved, but every round's sample of every server (a ratio is taken round by round). */
export async function interleavedRounds(
  servers: Server[],
  scenarioOrPerServer: Scenario | Scenario[],
  options: LoadOptions,
  log: (line: string) => void,
): Promise<Sample[][]> {
  // Some comparisons need a path per server (a cursor depends on the database behind it).
  const scenarioOf = (index: number) =>
    Array.isArray(scenarioOrPerServer) ? scenarioOrPerServer[index]! : scenarioOrPerServer;
  for (const [index, server] of servers.entries()) {
    if (options.warmupSeconds > 0)
      await drive(server, scenarioOf(index), { ...options, seconds: options.warmupSeconds });
  }
  const samples: Sample[][] = servers.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    for (const [index, server] of servers.entries()) {
      const sample = await drive(server, scenarioOf(index), options);
      samples[index]!.push(sample);
      log(
        `  ${scenarioOf(index).name} round ${round + 1} ${server.name}: ${fmt(sample.rps, 0)} req/s, ${fmt(sample.cpuUsPerRequest, 0)} µs CPU/req${sample.failures ? `, ${sample.failures} FAILED` : ''}`,
      );
      // Throughput of refused or failed requests measures the errors, not the service.
      if (sample.failures > 0) {
        throw new Error(
          `${sample.failures} requests of ${scenarioOf(index).name} failed on ${server.name} (non-2xx or socket errors); the run is void`,
        );
      }
    }
  }
  return samples;
}

/** The median, smallest and largest of per-round ratios a[i] / b[i]: how far one round can move a ratio. */
export function roundRatios(a: number[], b: number[]): { median: number; min: number; max: number } {
  const ratios = a.map((value, index) => value / (b[index] ?? Number.NaN)).filter((value) => Number.isFinite(value));
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

export function fmt(value: number, digits = 0): string {
  return Number.isFinite(value)
    ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
}

// ---------------------------------------------------------------- database

/** Where the bench's database lives: its URL (dropped and recreated) and the server's admin database. */
export interface BenchUrls {
  bench: string;
  admin: string;
}

function urlsOn(server: string, explicit: boolean): BenchUrls {
  const url = new URL(server);
  if (!explicit) url.pathname = '/pets_bench';
  const name = url.pathname.slice(1);
  // The bench drops and recreates this database; never point it at real data by accident.
  if (!/^[a-z0-9_]*bench[a-z0-9_]*$/.test(name)) {
    throw new Error(
      `the bench database name must contain "bench" (it is dropped and recreated); got ${JSON.stringify(name)}`,
    );
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  return { bench: url.toString(), admin: admin.toString() };
}

/** How the database was placed, for the report's first line. */
export let databasePlacement = 'PostgreSQL unpinned';

/**
 * The PostgreSQL the bench measures against. By default a private cluster
 * (lib/instances, stopped when the bench exits) whose processes, and every
 * backend it forks later, are pinned to core 0 beside the load generator:
 * the servers measured on core 1 never share their core with the database,
 * as in the outside measurement the targets come from (each server on one
 * core, PostgreSQL and the load generator on the other). Without that, a
 * backend woken on core 1 preempts the server mid-request and its CPU per
 * request moves with the scheduler, not with its code. BENCH_DATABASE_URL,
 * or BENCH_SHARED_POSTGRES=1 (DATABASE_URL's server, else 127.0.0.1:5432),
 * uses a running server instead, unpinned.
 */
export async function benchDatabase(): Promise<BenchUrls> {
  const explicit = process.env['BENCH_DATABASE_URL'];
  const privateCluster = !explicit && !process.env['BENCH_SHARED_POSTGRES'] && existsSync(join(postgresBin, 'initdb'));
  if (!privateCluster) {
    return urlsOn(explicit || process.env['DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/postgres', !!explicit);
  }
  // The bench's own statistics: the machine's cluster may run without autovacuum, the bench ANALYZEs.
  const server = await startPostgres({ settings: { max_connections: 200, fsync: 'off' } });
  if (hasTaskset) {
    for (const pid of processTree(server.pid)) spawnSync('taskset', ['-a', '-p', '-c', '0', String(pid)]);
    databasePlacement = 'PostgreSQL (a private cluster) on core 0';
  }
  return urlsOn(server.url('postgres'), false);
}

export async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function recreateDatabase(urls: { bench: string; admin: string }): Promise<void> {
  const name = new URL(urls.bench).pathname.slice(1);
  await withClient(urls.admin, async (client) => {
    for (const database of [name, `${name}_bare`]) {
      await client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await client.query(`CREATE DATABASE ${database}`);
    }
  });
  const migrated = spawnSync(process.execPath, ['dist/cli/migrate.js'], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: urls.bench },
    encoding: 'utf8',
  });
  if (migrated.status !== 0) throw new Error(`migration failed: ${migrated.stderr}`);
  // The bare peer brings no migrations: its README gives its own table.
  await withClient(bareDatabaseUrl(urls.bench), async (client) => {
    await client.query(`CREATE TABLE pets (id bigserial PRIMARY KEY, name text NOT NULL, category_id bigint NOT NULL,
      status text CHECK (status IN ('available', 'pending', 'sold')))`);
    await client.query('CREATE INDEX pets_status_id_idx ON pets (status, id)');
  });
}

/** The bare peer's database, beside the bench's: the same name with "_bare". */
export function bareDatabaseUrl(benchUrl: string): string {
  const url = new URL(benchUrl);
  url.pathname = `${url.pathname}_bare`;
  return url.toString();
}

/**
 * Adds pets until the table holds `total`, in one set-based statement, then
 * refreshes statistics; the same rows go to the bare peer's table (when it
 * exists), so an id valid on one server is valid on all.
 */
export async function seedPets(url: string, total: number): Promise<number> {
  const seed = async (client: pg.Client) => {
    const { rows } = await client.query<{ count: string }>('SELECT count(*) FROM pets');
    const have = Number(rows[0]!.count);
    if (total > have) {
      await client.query(
        `INSERT INTO pets (name, category_id, status)
         SELECT 'pet ' || g, 1 + g % 50, (ARRAY['available', 'pending', 'sold'])[1 + g % 3]
           FROM generate_series($1::int + 1, $2::int) AS g`,
        [have, total],
      );
    }
    await client.query('VACUUM ANALYZE pets');
    const max = await client.query<{ max: string }>('SELECT max(id) FROM pets');
    return Number(max.rows[0]!.max);
  };
  const maxId = await withClient(url, seed);
  const bareMaxId = await withClient(bareDatabaseUrl(url), seed).catch(() => maxId);
  // A random id drawn up to our max must exist on the bare peer too.
  return Math.min(maxId, bareMaxId);
}

/**
 * Stores the bench's API key (hashed) as our server's BOOTSTRAP_API_KEY does,
 * so the same-work baseline, which looks keys up, finds it whichever starts first.
 */
export async function storeBenchKey(url: string, key: string): Promise<void> {
  const keyHash = createHash('sha256').update(key).digest('hex');
  await withClient(url, async (client) => {
    await client.query('INSERT INTO api_keys (name, key_hash, key_prefix) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      `bootstrap-${keyHash.slice(0, 8)}`,
      keyHash,
      keyHash.slice(0, 8),
    ]);
  });
}

// ---------------------------------------------------------------- the baselines

/** The features bench/sameWork/server.mjs can switch (its SAME_WORK_FEATURES). */
export const sameWorkFeatures = [
  'keyLookup',
  'rateLimit',
  'requestId',
  'etag',
  'headers',
  'logLine',
  'metrics',
] as const;

/**
 * A baseline server: "bare" (../shared/peers/fastify-bare, the floor measured
 * outside: routes, schemas, SQL, a constant key; on its own table in
 * bareDatabaseUrl), "sameWork" (bench/sameWork/server.mjs: the per-request
 * contract work too; `features` "all", "none" or a comma list) or "peer" (the
 * lean hand-written peer). Both peers are copied out and installed by installPeer.
 */
export function baselineSpec(
  kind: 'bare' | 'sameWork' | 'peer',
  options: { name?: string; databaseUrl: string; key: string; port: number; features?: string; cores?: string },
): ServerSpec {
  if (kind === 'peer') return { ...peerSpec({ ...options, script: installPeer() }), name: options.name ?? 'peer' };
  if (kind === 'bare') {
    return {
      name: options.name ?? 'bare',
      args: [installPeer(undefined, 'fastify-bare')],
      env: { DATABASE_URL: bareDatabaseUrl(options.databaseUrl), API_KEY: options.key },
      port: options.port,
      cores: options.cores ?? '1',
      authorization: `Bearer ${options.key}`,
    };
  }
  return {
    name: options.name ?? 'same-work',
    args: ['bench/sameWork/server.mjs'],
    env: {
      DATABASE_URL: options.databaseUrl,
      BASELINE_API_KEY: options.key,
      // A quota no run reaches, as for ours: the limiter is paid for but never refuses.
      RATE_LIMIT_MAX: '1000000',
      SAME_WORK_FEATURES: options.features ?? 'all',
    },
    port: options.port,
    cores: options.cores ?? '1',
    authorization: `Bearer ${options.key}`,
  };
}

/**
 * A variant named on the command line of npm run bench -- variants and -- cold,
 * and of bench/profile.ts: "baseline" or "bare" (the bare baseline), "sameWork" or
 * "sameWork:<features>" (the same-work baseline), "peer" (the lean peer);
 * undefined for anything else.
 */
export function parseBaseline(variant: unknown): { kind: 'bare' | 'sameWork' | 'peer'; features?: string } | undefined {
  if (variant === 'baseline' || variant === 'bare') return { kind: 'bare' };
  if (variant === 'peer') return { kind: 'peer' };
  if (typeof variant !== 'string' || !variant.startsWith('sameWork')) return undefined;
  const features = variant.slice('sameWork:'.length);
  return { kind: 'sameWork', features: features || 'all' };
}

// ---------------------------------------------------------------- the peers

/** The hand-written peers in shared/peers: the lean one and the bare floor. */
export type PeerName = 'fastify-full' | 'fastify-bare';

/**
 * Where a peer lives (its README: a measuring instrument, read-only, run from
 * a copy): BENCH_PEER_DIR (the lean one) or BENCH_BARE_DIR (the bare one),
 * else shared/peers/<name> beside the repository (a clone) or beside its
 * parent folder (a worktree).
 */
function peerSource(peer: PeerName): string {
  const explicit = process.env[peer === 'fastify-full' ? 'BENCH_PEER_DIR' : 'BENCH_BARE_DIR'];
  const candidates = explicit
    ? [explicit]
    : [`../shared/peers/${peer}`, `../../shared/peers/${peer}`].map((path) => join(repoRoot, path));
  const found = candidates.find((dir) => existsSync(join(dir, 'server.js')));
  if (!found) throw new Error(`the peer ${peer} is not at ${candidates.join(' or ')}`);
  return found;
}

/**
 * Copies a peer out to the temp dir and installs it there (npm ci), once
 * per version of its files: the copy is named by a hash of its server and
 * lock file, and reused while its install is complete. Returns its server.js.
 */
export function installPeer(log: (line: string) => void = () => undefined, peer: PeerName = 'fastify-full'): string {
  const source = peerSource(peer);
  const fingerprint = createHash('sha256');
  for (const file of ['server.js', 'package.json', 'package-lock.json'])
    fingerprint.update(readFileSync(join(source, file)));
  const copy = join(tmpdir(), `pets-bench-${peer}-${fingerprint.digest('hex').slice(0, 12)}`);
  const installed = join(copy, 'node_modules', '.package-lock.json');
  if (!existsSync(installed)) {
    log(`installing the peer ${peer} from ${source} in ${copy}`);
    rmSync(copy, { recursive: true, force: true });
    cpSync(source, copy, { recursive: true });
    spawnSync('chmod', ['-R', 'u+w', copy]);
    const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: copy,
      encoding: 'utf8',
    });
    if (npm.status !== 0) throw new Error(`npm ci of the peer ${peer} failed: ${npm.stderr}`);
  }
  return join(copy, 'server.js');
}

/** The lean peer as the bench runs it: every feature it has on, a quota no run reaches, metrics on. */
export function peerSpec(options: {
  script: string;
  databaseUrl: string;
  key: string;
  port: number;
  cores?: string;
}): ServerSpec {
  return {
    name: 'peer',
    args: [options.script],
    env: {
      DATABASE_URL: options.databaseUrl,
      API_KEY: options.key,
      RATE_LIMIT_MAX: '1000000',
      LOG_LEVEL: 'info',
      // startServer's METRICS_PORT=0: its histogram on, on a free port.
    },
    port: options.port,
    cores: options.cores ?? '1',
    authorization: `Bearer ${options.key}`,
  };
}

export { encodeCursor } from '../src/handlers/cursor.js';
