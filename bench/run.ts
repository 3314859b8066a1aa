// npm run bench [-- --scale --seconds 10 --rounds 5 ...]: see the README, section "Performance".
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/load.js';
import { listStatements } from '../src/db/pets.js';
import { entityTagOf } from '../src/entityTags.js';
import { repoRoot } from '../lib/repoRoot.js';
import {
  baselineSpec,
  coreCount,
  benchDatabase,
  encodeCursor,
  fmt,
  interleaved,
  interleavedRounds,
  installPeer,
  peerSpec,
  pinSelf,
  recreateDatabase,
  sameWorkFeatures,
  seedPets,
  startServer,
  storeBenchKey,
  median,
  namedScenarios,
  roundRatios,
  summarize,
  withClient,
  type Sample,
  type Scenario,
  type Server,
  type ServerSpec,
  unpinSelf,
  type Summary,
} from './lib.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '7' },
    warmup: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
    pets: { type: 'string', default: '10000' },
    scale: { type: 'boolean', default: false },
    'scale-pets': { type: 'string', default: '1000000' },
    stale: { type: 'boolean', default: false },
    'skip-extras': { type: 'boolean', default: false },
    extras: { type: 'boolean', default: false },
    'feature-scenarios': { type: 'string', default: 'getPet,list20' },
    'feature-warmup': { type: 'string', default: '3' },
    'feature-seconds': { type: 'string', default: '2' },
    'feature-rounds': { type: 'string', default: '5' },
    'cold-starts': { type: 'string', default: '7' },
    entry: { type: 'string', default: 'dist/server.js' },
    'compare-entry': { type: 'string', default: '' },
    help: { type: 'boolean', default: false },
  },
});

if (flags.help) {
  process.stdout.write(`npm run bench -- [options]
  --seconds N       length of one measured round (default 3)
  --rounds N        interleaved rounds per server (default 7): medians, and each ratio's median,
                    smallest and largest over the rounds (ratios are taken round by round)
  --warmup N        seconds of unmeasured load per server before the rounds (default 10: the JIT needs it)
  --connections N   concurrent connections (default 20)
  --pets N          pets seeded (default 10000)
  --skip-extras     only the table of ours against the peer and the two baselines
  --entry FILE      ours from another build (default dist/server.js; a copy beside node_modules)
  --compare-entry FILE  also another build of ours, in the same rounds: its CPU and ours ÷ it
                    (e.g. cp -r dist dist-before before a change; 25 % longer)
  --feature-scenarios LIST   loads the per-feature costs are measured on (default getPet,list20; of
                    list20, list100, getPet, createPet; "" for none)
  --feature-warmup N  warm-up seconds per server for the per-feature costs (default 3: the baselines warm fast)
  --feature-seconds N  length of one round for the per-feature costs (default 2; nine servers take turns)
  --feature-rounds N   rounds for the per-feature costs (default 5: more, shorter rounds, as the costs are small)
  --cold-starts N   interleaved cold starts of each server (default 5), medians
  --extras          also our own variants (key cache, response validation, log level, statements,
                    metrics, Idempotency-Key, 304, tracing) and one process against two (about 15 min more)
  --scale           instead: the loads at --pets vs --scale-pets pets (CPU per request, latency,
                    p99), and EXPLAIN ANALYZE of the list queries
  --scale-pets N    the large size for --scale (default 1000000)
  --stale           with --scale: the large table analysed at --pets pets, then grown to
                    --scale-pets without ANALYZE, nearly every new pet available (a soak's creates)
Environment: BENCH_DATABASE_URL (dropped and recreated; its name must contain "bench"),
else DATABASE_URL's server with database pets_bench, else postgres://postgres@127.0.0.1:5432.
BENCH_PEER_DIR: the lean peer (default ../shared/peers/fastify-full), BENCH_BARE_DIR: the bare one
(default ../shared/peers/fastify-bare), each copied to the temp dir and installed there with npm ci
once per version of its files; the bare one runs on its own table in <bench database>_bare.
`);
  process.exit(0);
}

const positive = (name: string, text: string) => {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
};
const seconds = positive('seconds', flags.seconds);
const rounds = Math.round(positive('rounds', flags.rounds));
const warmupSeconds = Number(flags.warmup);
const connections = Math.round(positive('connections', flags.connections));
const pets = Math.round(positive('pets', flags.pets));
const scalePets = Math.round(positive('scale-pets', flags['scale-pets']));

const key = `bench_${randomBytes(24).toString('base64url')}`;
const authorization = `Bearer ${key}`;
const load = { rounds, seconds, warmupSeconds, connections, authorization };
const log = (line: string) => process.stderr.write(`${line}\n`);
let nextPort = 3100;
// The settings this build of the service knows (its defaults filled in).
const settings = new Set(Object.keys(loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/pets_bench' })));

function ours(
  name: string,
  databaseUrl: string,
  env: Record<string, string> = {},
  cores: string | undefined = '1',
  entry = flags.entry,
): ServerSpec {
  return {
    name,
    args: [entry],
    // Production defaults (request log lines at info, rate limiting on), with a
    // quota no benchmark run reaches, so the limiter is paid for but never refuses.
    env: {
      DATABASE_URL: databaseUrl,
      BOOTSTRAP_API_KEY: key,
      LOG_LEVEL: 'info',
      RATE_LIMIT_MAX: '1000000',
      // No balancer to wait for: a SIGTERM stops it at once (the drain delay costs nothing per request).
      ...(settings.has('DRAIN_DELAY_MS') ? { DRAIN_DELAY_MS: '0' } : {}),
      // Several of ours run at once: each its own metrics port.
      ...(settings.has('METRICS_PORT') ? { METRICS_PORT: String(nextPort + 1000) } : {}),
      ...env,
    },
    port: nextPort++,
    cores,
    authorization,
  };
}

function machine(): string {
  const model = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `${coreCount} cores (${model}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

async function postgresVersion(url: string): Promise<string> {
  return withClient(
    url,
    async (client) => (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version,
  );
}

function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

const ratio = (a: number, b: number) => `${fmt(a / b, 2)}×`;

async function stopAll(servers: Server[]): Promise<void> {
  await Promise.all(servers.map((server) => server.stop()));
}

async function main(): Promise<string> {
  const urls = await benchDatabase();
  const pinning = pinSelf();
  log(`database ${urls.bench.replace(/:[^:@/]*@/, ':***@')}; ${pinning}`);
  return flags.scale ? scale(urls) : compare(urls, pinning);
}

// ---------------------------------------------------------------- ours vs the two baselines

// The targets, every production default of ours on: server CPU per request
// at most 0.97x the lean peer's on both lists and getPet, at most 1.3x the
// bare floor's on getPet and listPets 20; cold start at most 1.3x the peer's.
const targets = { cpuOverBare: 1.3, cpuOverPeer: 0.97, coldStart: 1.3 };
const peerTargetLoads = new Set([
  'GET /v1/pets (limit 20)',
  'GET /v1/pets?status=available&limit=100',
  'GET /v1/pets/{id}',
]);
const bareTargetLoads = new Set(['GET /v1/pets (limit 20)', 'GET /v1/pets/{id}']);

/** The servers of the main table, in the order they take turns. */
const sides = ['ours', 'peer', 'same-work', 'bare'] as const;
type Rounds = Sample[][];

/** "1.02× (0.95–1.10)": the median of per-round ratios, then the smallest and largest. */
function spread(ratios: { median: number; min: number; max: number }): string {
  return `${fmt(ratios.median, 2)}× (${fmt(ratios.min, 2)}–${fmt(ratios.max, 2)})`;
}

const cpuOf = (samples: Sample[]) => samples.map((sample) => sample.cpuUsPerRequest);
const rpsOf = (samples: Sample[]) => samples.map((sample) => sample.rps);
const cpuRatio = (rounds: Rounds, a: number, b: number) => roundRatios(cpuOf(rounds[a]!), cpuOf(rounds[b]!));

function mainTable(scenarios: Scenario[], results: Rounds[]): string {
  const rows = scenarios.map((scenario, index) => {
    const rounds = results[index]!;
    const [o, p, s, b] = rounds.map(summarize) as [Summary, Summary, Summary, Summary];
    const all = [o, p, s, b];
    return [
      scenario.name,
      all.map((x) => fmt(x.cpuUsPerRequest, 1)).join(' / '),
      `**${spread(cpuRatio(rounds, 0, 1))}**`,
      `**${spread(cpuRatio(rounds, 0, 3))}**`,
      spread(cpuRatio(rounds, 0, 2)),
      spread(cpuRatio(rounds, 1, 3)),
      spread(roundRatios(rpsOf(rounds[0]!), rpsOf(rounds[1]!))),
      ...(rounds[4] ? [`${fmt(summarize(rounds[4]).cpuUsPerRequest, 1)}: ${spread(cpuRatio(rounds, 0, 4))}`] : []),
      all.map((x) => fmt(x.rps)).join(' / '),
      `${fmt(o.p50, 1)} / ${fmt(p.p50, 1)} · ${fmt(o.p99, 1)} / ${fmt(p.p99, 1)}`,
      all.map((x) => fmt(x.rssMiB)).join(' / '),
      String(all.reduce((sum, x) => sum + x.failures, 0)),
    ];
  });
  return table(
    [
      'endpoint',
      `server CPU µs/req ${sides.join(' / ')} (medians)`,
      `CPU ours ÷ peer (target ≤ ${targets.cpuOverPeer} on getPet, both lists)`,
      `CPU ours ÷ bare (target ≤ ${targets.cpuOverBare} on getPet, listPets 20)`,
      'CPU ours ÷ same-work',
      'CPU peer ÷ bare',
      'throughput ours ÷ peer',
      ...(flags['compare-entry'] ? [`CPU µs/req of ${flags['compare-entry']}: ours ÷ it`] : []),
      `req/s ${sides.join(' / ')}`,
      'p50 · p99 ms ours / peer',
      `RSS under load MiB ${sides.join(' / ')}`,
      'failed',
    ],
    rows,
  );
}

/** Met when the median of the per-round ratios is; "in every round" when the largest is too. */
function verdict(ratios: { median: number; max: number }, limit: number): string {
  const within = (value: number) => value <= limit;
  if (!within(ratios.median)) return '**missed**';
  return within(ratios.max) ? 'met in every round' : 'met (median; not in every round)';
}

function targetLines(scenarios: Scenario[], results: Rounds[]): string {
  return scenarios
    .map((scenario, index) => {
      const rounds = results[index]!;
      const overPeer = cpuRatio(rounds, 0, 1);
      const overBare = cpuRatio(rounds, 0, 3);
      const bareTarget = bareTargetLoads.has(scenario.name)
        ? `; ${spread(overBare)} the bare work (target ≤ ${targets.cpuOverBare}×) ${verdict(overBare, targets.cpuOverBare)}`
        : '';
      const peerTarget = peerTargetLoads.has(scenario.name)
        ? `(target ≤ ${targets.cpuOverPeer}×) ${verdict(overPeer, targets.cpuOverPeer)}`
        : '(no target)';
      return `- ${scenario.name}: CPU ${spread(overPeer)} the peer's ${peerTarget}${bareTarget}.`;
    })
    .join('\n');
}

/** The loads --feature-scenarios names, from the four of the main table. */
function featureScenarios(scenarios: Scenario[]): Scenario[] {
  const [list20, list100, getPet, createPet] = scenarios as [Scenario, Scenario, Scenario, Scenario];
  const byName: Record<string, Scenario> = { list20, list100, getPet, createPet };
  return flags['feature-scenarios']
    .split(',')
    .filter((name) => name.trim() !== '')
    .map((name) => {
      const scenario = byName[name.trim()];
      if (!scenario) throw new Error(`--feature-scenarios: ${name} is not one of ${Object.keys(byName).join(', ')}`);
      return scenario;
    });
}

/**
 * What each piece of the per-request contract work costs over the bare
 * server: the same-work baseline with no feature, with each feature alone,
 * and with all, interleaved on one load; a feature's cost is its server's
 * CPU per request minus the one with none.
 */
async function featureCosts(databaseUrl: string, scenarios: Scenario[]): Promise<string> {
  if (scenarios.length === 0) return '';
  const variants = ['none', ...sameWorkFeatures, 'all'];
  const servers: Server[] = [];
  const columns: Summary[][] = [];
  try {
    for (const features of variants) {
      servers.push(
        await startServer(
          baselineSpec('sameWork', { name: `same-work: ${features}`, databaseUrl, key, port: nextPort++, features }),
        ),
      );
    }
    const featureLoad = {
      ...load,
      seconds: positive('feature-seconds', flags['feature-seconds']),
      rounds: Math.round(positive('feature-rounds', flags['feature-rounds'])),
      warmupSeconds: Number(flags['feature-warmup']),
    };
    for (const scenario of scenarios) columns.push(await interleaved(servers, scenario, featureLoad, log));
  } finally {
    await stopAll(servers);
  }
  const rows = variants.map((features, row) => [
    features === 'none'
      ? 'none (routes, schemas, SQL, a constant key check: the bare work)'
      : features === 'all'
        ? 'all (the same-work baseline)'
        : features,
    ...columns.flatMap((summaries) => {
      const cpu = summaries[row]!.cpuUsPerRequest;
      const increment = cpu - summaries[0]!.cpuUsPerRequest;
      return [fmt(cpu, 1), row === 0 ? '-' : `${increment >= 0 ? '+' : ''}${fmt(increment, 1)}`];
    }),
  ]);
  const sums = columns.flatMap((summaries) => {
    const none = summaries[0]!.cpuUsPerRequest;
    const sum = summaries.slice(1, -1).reduce((total, summary) => total + summary.cpuUsPerRequest - none, 0);
    return ['', `${sum >= 0 ? '+' : ''}${fmt(sum, 1)}`];
  });
  rows.push(['sum of the single features', ...sums]);
  return [
    '\n### What each feature costs over the bare work (same-work baseline, one feature at a time)\n',
    `SAME_WORK_FEATURES=<feature> against none, interleaved, ${flags['feature-rounds']} rounds of ${flags['feature-seconds']} s after ${flags['feature-warmup']} s warm-up, medians; server CPU µs per request.\n`,
    table(['features on', ...scenarios.flatMap((scenario) => [`${scenario.name} µs/req`, 'over none'])], rows),
  ].join('\n');
}

/** Spawn to the first 200, each server in turn, `--cold-starts` times; medians, per-round ratios, the target. */
async function coldStarts(databaseUrl: string, peerScript: string, results: Rounds[]): Promise<string> {
  const specs = () => [
    ours('ours', databaseUrl),
    peerSpec({ script: peerScript, databaseUrl, key, port: nextPort++ }),
    baselineSpec('sameWork', { databaseUrl, key, port: nextPort++ }),
    baselineSpec('bare', { databaseUrl, key, port: nextPort++ }),
  ];
  const starts: number[][] = [[], [], [], []];
  for (let round = 0; round < Math.round(Number(flags['cold-starts'])); round++) {
    for (const [index, spec] of specs().entries()) {
      const server = await startServer(spec);
      starts[index]!.push(server.coldStartMs);
      await server.stop();
    }
  }
  const overPeer = roundRatios(starts[0]!, starts[1]!);
  const peak = (side: number) => Math.max(...results.map((rounds) => summarize(rounds[side]!).rssMiB));
  return [
    '\n### Cold start and memory\n',
    table(
      ['', ...sides, 'ours ÷ peer, per round: median (min–max)'],
      [
        [
          `spawn to first 200 on PostgreSQL, ms, median of ${starts[0]!.length} interleaved (target ≤ ${targets.coldStart}× the peer)`,
          ...starts.map((values) => fmt(median(values))),
          `**${spread(overPeer)}** ${verdict(overPeer, targets.coldStart)}`,
        ],
        [
          'peak RSS under load (any endpoint above), MiB',
          ...sides.map((_, side) => fmt(peak(side))),
          ratio(peak(0), peak(1)),
        ],
      ],
    ),
  ].join('\n');
}

async function compare(urls: { bench: string; admin: string }, pinning: string): Promise<string> {
  await recreateDatabase(urls);
  const maxId = await seedPets(urls.bench, pets);
  log(`seeded ${pets} pets`);
  const randomPet = () => `/v1/pets/${1 + Math.floor(Math.random() * maxId)}`;
  const scenarios: Scenario[] = [
    { name: 'GET /v1/pets (limit 20)', path: '/v1/pets' },
    { name: 'GET /v1/pets?status=available&limit=100', path: '/v1/pets?status=available&limit=100' },
    { name: 'GET /v1/pets/{id}', path: '/v1/pets/1', pathFor: randomPet },
    {
      name: 'POST /v1/pets',
      method: 'POST',
      path: '/v1/pets',
      body: JSON.stringify({ name: 'Bench', categoryId: 7, status: 'pending' }),
    },
  ];
  const [list20, , getPet] = scenarios as [Scenario, Scenario, Scenario, Scenario];

  const out: string[] = [];
  out.push(`Machine: ${machine()}, PostgreSQL ${await postgresVersion(urls.bench)} on the same host; ${pinning}.`);
  out.push(
    `${pets} pets; ${connections} connections; ${rounds} interleaved rounds of ${seconds} s per server (after ${warmupSeconds} s warm-up); CPU µs/req and req/s are medians over the rounds; each ratio is taken round by round (the servers run one after the other in each round), reported as the median of the ${rounds} ratios and, in brackets, the smallest and largest.`,
  );
  out.push(
    `Ours: node ${flags.entry} with production defaults (response validation, API key cache 5 s, LOG_LEVEL=info, rate limiting, metrics, load shedding; tracing off). ` +
      'Peer: ../shared/peers/fastify-full (the lean hand-written fastify + pg server, copied out and installed by the bench), the same per-request contract work, no response validation. ' +
      'Same-work: node bench/sameWork/server.mjs, hand-written fastify + pg doing the same per-request contract work (key lookup with a 5 s cache, rate limit and its headers, request id, nosniff/no-store/deprecation headers, ETag and 304, one pino line, a prom-client histogram). ' +
      'Bare: ../shared/peers/fastify-bare (the floor measured outside: routes, schemas and SQL only, a constant key compared as a string, on its own table with the same rows; copied out and installed by the bench).\n',
  );

  const peerScript = installPeer(log);
  // The baselines look the key up: it must be stored whichever server starts first.
  await storeBenchKey(urls.bench, key);
  const main = [
    await startServer(ours('ours', urls.bench)),
    await startServer(peerSpec({ script: peerScript, databaseUrl: urls.bench, key, port: nextPort++ })),
    await startServer(baselineSpec('sameWork', { databaseUrl: urls.bench, key, port: nextPort++ })),
    await startServer(baselineSpec('bare', { databaseUrl: urls.bench, key, port: nextPort++ })),
  ];
  if (flags['compare-entry'])
    main.push(await startServer(ours(flags['compare-entry'], urls.bench, {}, '1', flags['compare-entry'])));
  const [oursServer] = main as [Server, Server, Server, Server];
  const results: Rounds[] = [];
  try {
    for (const scenario of scenarios) {
      results.push(await interleavedRounds(main, scenario, load, log));
    }
    out.push(mainTable(scenarios, results));
    out.push(`\n${targetLines(scenarios, results)}`);
    log(`\n${out.join('\n')}\n`);
    if (flags['skip-extras']) return out.join('\n');

    out.push(await featureCosts(urls.bench, featureScenarios(scenarios)));
    log(`\n${out.at(-1)}\n`);

    if (flags.extras) {
      // Each extra compares one setting of ours against ours as above, interleaved the same way.
      const variant = async (title: string, spec: ServerSpec, scenariosToRun: Scenario[], labels: [string, string]) => {
        const other = await startServer(spec);
        const lines: string[][] = [];
        try {
          for (const scenario of scenariosToRun) {
            const [a, b] = (await interleaved([oursServer, other], scenario, load, log)) as [Summary, Summary];
            lines.push([
              scenario.name,
              `${fmt(a.rps)} / ${fmt(b.rps)}`,
              ratio(b.rps, a.rps),
              `${fmt(a.cpuUsPerRequest)} / ${fmt(b.cpuUsPerRequest)}`,
              `${fmt(b.cpuUsPerRequest - a.cpuUsPerRequest)} µs`,
            ]);
          }
        } finally {
          await other.stop();
        }
        out.push(`\n### ${title}\n`);
        out.push(
          table(
            [
              'endpoint',
              `req/s ${labels[0]} / ${labels[1]}`,
              `throughput ${labels[1]}/${labels[0]}`,
              `CPU µs/req ${labels[0]} / ${labels[1]}`,
              `CPU µs/req ${labels[1]} − ${labels[0]}`,
            ],
            lines,
          ),
        );
      };
      await variant(
        'API key cache (API_KEY_CACHE_SECONDS=5 vs 0)',
        ours('ours, no key cache', urls.bench, { API_KEY_CACHE_SECONDS: '0' }),
        [getPet],
        ['cache 5 s', 'no cache'],
      );
      await variant(
        'Request logging (LOG_LEVEL=info vs warn)',
        ours('ours, LOG_LEVEL=warn', urls.bench, { LOG_LEVEL: 'warn' }),
        [getPet],
        ['info', 'warn'],
      );
      await variant(
        'Statements (DATABASE_STATEMENTS=named vs unnamed, as behind a transaction pooler)',
        ours('ours, unnamed statements', urls.bench, { DATABASE_STATEMENTS: 'unnamed' }),
        [getPet, list20],
        ['named', 'unnamed'],
      );
      // Features with a switch that landed after this bench was written: measured
      // once the configuration knows the setting, so the table grows with them.
      if (settings.has('METRICS_PORT')) {
        await variant(
          'Metrics (METRICS_PORT default vs off)',
          ours('ours, no metrics', urls.bench, { METRICS_PORT: 'off' }),
          [list20, getPet],
          ['on', 'off'],
        );
      }

      await requestVariants(oursServer, out, scenarios);
      const sink = await startOtlpSink();
      try {
        await variant(
          'Tracing (off vs on: OTLP http/json to a local sink, every request sampled)',
          ours('ours, tracing on', urls.bench, {
            OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
            OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          }),
          [getPet],
          ['tracing off', 'tracing on'],
        );
      } finally {
        sink.close();
      }
    }
    await stopAll(main);

    out.push(await coldStarts(urls.bench, peerScript, results));
    if (!flags.extras) return out.join('\n');

    // One process against two: nothing pinned, since two workers need both cores (and share them with the load generator and PostgreSQL).
    unpinSelf();
    const single = await startServer(ours('1 process', urls.bench, {}, undefined));
    const double = await startServer(
      ours('2 processes (cluster)', urls.bench, { WEB_CONCURRENCY: '2' }, undefined, 'dist/cluster.js'),
    );
    const scaleRows: string[][] = [];
    try {
      for (const scenario of [list20]) {
        const [one, two] = (await interleaved([single, double], scenario, load, log)) as [Summary, Summary];
        scaleRows.push([
          scenario.name,
          fmt(one.rps),
          fmt(two.rps),
          ratio(two.rps, one.rps),
          `${fmt(one.cpuUsPerRequest)} / ${fmt(two.cpuUsPerRequest)}`,
          `${fmt(one.rssMiB)} / ${fmt(two.rssMiB)}`,
        ]);
      }
    } finally {
      await stopAll([single, double]);
    }
    out.push('\n### One process vs two (node dist/cluster.js, WEB_CONCURRENCY=2; nothing pinned)\n');
    out.push(
      table(
        ['endpoint', 'req/s 1 process', 'req/s 2 processes', '2 / 1', 'CPU µs/req 1 / 2', 'RSS MiB 1 / 2'],
        scaleRows,
      ),
    );
    return out.join('\n');
  } finally {
    await stopAll(main);
  }
}

/**
 * Features a client switches on per request, measured on one server: the
 * same scenario with and without the header, interleaved; and the ETag's
 * hash, which every 200 of the GETs pays, timed in-process on a real body.
 */
async function requestVariants(server: Server, out: string[], scenarios: Scenario[]): Promise<void> {
  const [, list100, , post] = scenarios as [Scenario, Scenario, Scenario, Scenario];
  let keys = 0;
  const withKey: Scenario = {
    ...post,
    name: `${post.name} with a new Idempotency-Key each`,
    headersFor: () => ({ 'idempotency-key': `bench-${process.pid}-${(keys += 1)}` }),
  };
  const onePet: Scenario = { name: 'GET /v1/pets/1', path: '/v1/pets/1' };
  const pairs: Array<[string, Scenario, Scenario, [string, string]]> = [
    ['Idempotency-Key on createPet (none vs a new key per request)', post, withKey, ['no key', 'key']],
  ];
  for (const scenario of [list100, onePet]) {
    const response = await fetch(`${server.url}${scenario.path}`, { headers: { authorization } });
    const tag = response.headers.get('etag');
    await response.arrayBuffer();
    if (tag === null) throw new Error(`${scenario.name}: no ETag on a 200`);
    const revalidate: Scenario = {
      ...scenario,
      name: `${scenario.name}, If-None-Match → 304`,
      headers: { 'if-none-match': tag },
      expectStatus: 304,
    };
    pairs.push([`Conditional GET: ${scenario.name} (200 vs 304)`, scenario, revalidate, ['200', '304']]);
  }
  for (const [title, plain, other, labels] of pairs) {
    const [a, b] = (await interleaved([server, server], [plain, other], load, log)) as [Summary, Summary];
    out.push(`\n### ${title}\n`);
    out.push(
      table(
        [
          'req/s ' + labels.join(' / '),
          `throughput ${labels[1]}/${labels[0]}`,
          `CPU µs/req ${labels.join(' / ')}`,
          'difference',
        ],
        [
          [
            `${fmt(a.rps)} / ${fmt(b.rps)}`,
            ratio(b.rps, a.rps),
            `${fmt(a.cpuUsPerRequest)} / ${fmt(b.cpuUsPerRequest)}`,
            `${fmt(b.cpuUsPerRequest - a.cpuUsPerRequest)} µs`,
          ],
        ],
      ),
    );
  }
  out.push(`\n${await entityTagCost(server, list100)}`);
}

/** What entityTagOf costs per call on the body of a scenario's 200 (SHA-256 of the serialized body). */
async function entityTagCost(server: Server, scenario: Scenario): Promise<string> {
  const response = await fetch(`${server.url}${scenario.path}`, { headers: { authorization } });
  const body = await response.text();
  const link = response.headers.get('link') ?? undefined;
  const calls = 20_000;
  for (let i = 0; i < 1000; i++) entityTagOf(body, link);
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) entityTagOf(body, link);
  const microseconds = Number(process.hrtime.bigint() - started) / 1e3 / calls;
  return `ETag on every 200 of the GETs: ${fmt(microseconds, 1)} µs per response for ${scenario.name} (${fmt(body.length)} bytes), timed in-process over ${fmt(calls)} calls.`;
}

/** An OTLP/HTTP endpoint that accepts and drops spans, so tracing costs what exporting costs. */
async function startOtlpSink(): Promise<{ url: string; close(): void }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}

// ---------------------------------------------------------------- --scale

const listQueries = [
  { name: 'first page', statement: listStatements.listAfter, params: (_max: number) => [0, 21] },
  {
    name: 'first page, status = sold',
    statement: listStatements.listByStatusAfter,
    params: (_max: number) => ['sold', 0, 21],
  },
  {
    name: 'deep page (cursor 1,000 ids before the end)',
    statement: listStatements.listAfter,
    params: (max: number) => [max - 1000, 21],
  },
  {
    name: 'status = pending, after the --pets analysed ids',
    statement: listStatements.listByStatusAfter,
    params: (_max: number) => ['pending', pets, 21],
  },
  {
    name: 'deep page, status = sold',
    statement: listStatements.listByStatusAfter,
    params: (max: number) => ['sold', max - 1000, 21],
  },
];

/**
 * EXPLAIN ANALYZE of each list query as the service runs it: a named
 * statement both as a custom plan and as the generic plan it settles on, an
 * unnamed one planned for its values (the service never reuses its plan).
 */
async function explain(url: string, maxId: number): Promise<string> {
  return withClient(url, async (client) => {
    const parts: string[] = [];
    for (const query of listQueries) {
      const modes = query.statement.name ? ['force_custom_plan', 'force_generic_plan'] : ['force_custom_plan'];
      for (const mode of modes) {
        await client.query(`SET plan_cache_mode = ${mode}`);
        await client.query('DEALLOCATE ALL');
        await client.query(`PREPARE q AS ${query.statement.text}`);
        const args = query.params(maxId).map((value) => (typeof value === 'string' ? `'${value}'` : String(value)));
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE q(${args.join(', ')})`,
        );
        const label = !query.statement.name
          ? 'unnamed: planned per run'
          : mode === 'force_generic_plan'
            ? 'generic plan'
            : 'custom plan';
        parts.push(
          `-- ${query.name} (${label})\n-- ${query.statement.text}  -- (${args.join(', ')})\n${rows.map((row) => row['QUERY PLAN']).join('\n')}\n`,
        );
      }
    }
    return parts.join('\n');
  });
}

/**
 * The soak's table: --pets pets (a third of each status) analysed, then grown
 * to --scale-pets without ANALYZE, as a service's own creates grow it with
 * autovacuum off: 98 in 100 new pets available, one pending, one sold. The
 * planner still believes the last sample: a third of each status, --pets rows.
 */
async function growStale(url: string): Promise<number> {
  await seedPets(url, pets);
  return withClient(url, async (client) => {
    await client.query('ALTER TABLE pets SET (autovacuum_enabled = false)');
    await client.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'pet ' || g, 1 + g % 50, CASE g % 100 WHEN 0 THEN 'sold' WHEN 1 THEN 'pending' ELSE 'available' END
         FROM generate_series($1::int + 1, $2::int) AS g`,
      [pets, scalePets],
    );
    const max = await client.query<{ max: string }>('SELECT max(id) FROM pets');
    return Number(max.rows[0]!.max);
  });
}

async function scale(urls: { bench: string; admin: string }): Promise<string> {
  const bigUrl = new URL(urls.bench);
  bigUrl.pathname = `${bigUrl.pathname}_big`;
  const big = { bench: bigUrl.toString(), admin: urls.admin };
  await recreateDatabase(urls);
  await recreateDatabase(big);
  const smallMax = await seedPets(urls.bench, pets);
  log(`seeded ${pets} pets; seeding ${scalePets} (this takes a while)`);
  const bigMax = flags.stale ? await growStale(big.bench) : await seedPets(big.bench, scalePets);
  log(`seeded ${scalePets} pets${flags.stale ? `, the last ${scalePets - pets} after the last ANALYZE` : ''}`);

  const scenariosFor = (max: number): Scenario[] => [
    { ...namedScenarios(max).list20, name: 'list 20' },
    { ...namedScenarios(max).list100, name: 'list 100, status=available' },
    { ...namedScenarios(max).getPet, name: 'getPet (random ids)' },
    ...['pending', 'sold'].map((status) => ({
      name: `GET /v1/pets?status=${status}`,
      path: `/v1/pets?status=${status}`,
    })),
    {
      name: 'status=pending, cursor in the middle',
      path: `/v1/pets?status=pending&cursor=${encodeCursor(Math.floor(max / 2))}`,
    },
    { name: 'deep page: cursor 1,000 ids before the end', path: `/v1/pets?cursor=${encodeCursor(max - 1000)}` },
    {
      name: 'deep page: status=sold, cursor 1,000 ids before the end',
      path: `/v1/pets?status=sold&cursor=${encodeCursor(max - 1000)}`,
    },
  ];
  const small = await startServer(ours(`${pets} pets`, urls.bench));
  const large = await startServer(ours(`${scalePets} pets`, big.bench));
  const rows: string[][] = [];
  const smallScenarios = scenariosFor(smallMax);
  const largeScenarios = scenariosFor(bigMax);
  try {
    // --connections as the main table (CPU per request comparable with it); with
    // --connections 1 the mean is the request's own latency, not queueing.
    for (const [index, scenario] of smallScenarios.entries()) {
      const [s, l] = (await interleaved([small, large], [scenario, largeScenarios[index]!], load, log)) as [
        Summary,
        Summary,
      ];
      const meanSmall = (1e6 * connections) / s.rps;
      const meanLarge = (1e6 * connections) / l.rps;
      rows.push([
        scenario.name,
        `${fmt(s.cpuUsPerRequest)} / ${fmt(l.cpuUsPerRequest)}`,
        `**${ratio(l.cpuUsPerRequest, s.cpuUsPerRequest)}**`,
        `${fmt(meanSmall)} / ${fmt(meanLarge)}`,
        `${fmt(s.p99, 1)} / ${fmt(l.p99, 1)}`,
        `**${ratio(l.p99, s.p99)}**`,
        String(s.failures + l.failures),
      ]);
    }
  } finally {
    await stopAll([small, large]);
  }
  const how = flags.stale ? `, the last ${scalePets - pets} grown after the last ANALYZE` : '';
  const plans = `EXPLAIN (ANALYZE, BUFFERS) of the listPets queries at ${scalePets} pets${how} (PostgreSQL ${await postgresVersion(big.bench)}).\n\n${await explain(big.bench, bigMax)}`;
  mkdirSync(join(repoRoot, 'bench/results'), { recursive: true });
  const planFile = join(repoRoot, `bench/results/explain-1m${flags.stale ? '-stale' : ''}.txt`);
  writeFileSync(planFile, plans);
  await withClient(urls.admin, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${bigUrl.pathname.slice(1)} WITH (FORCE)`);
  });
  return [
    `Machine: ${machine()}; PostgreSQL on the same host. ${connections} connection(s), ${rounds} rounds of ${seconds} s, medians; mean latency = connections / (req/s).`,
    `The large table: ${scalePets} pets${how || ', analysed'}.`,
    '',
    table(
      [
        'load',
        `CPU µs/req at ${pets} / ${scalePets}`,
        'ratio',
        'mean µs small / large',
        'p99 ms small / large',
        'ratio',
        'failed',
      ],
      rows,
    ),
    '',
    `Query plans written to ${relative(repoRoot, planFile)}.`,
  ].join('\n');
}

main()
  .then((report) => {
    mkdirSync(join(repoRoot, 'bench/results'), { recursive: true });
    writeFileSync(join(repoRoot, `bench/results/${flags.scale ? 'scale' : 'latest'}.md`), `${report}\n`);
    process.stdout.write(`\n${report}\n`);
    process.exit(0);
  })
  .catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
