// npm run bench -- statements [--seconds 5 --rounds 3]: what DATABASE_STATEMENTS=unnamed costs, and the
// PgBouncer hop (transaction mode), against named statements on a direct connection. A small run of its
// own (three servers, three scenarios) instead of the whole npm run bench. See docs/scaling.md.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { missingPackages, startPgBouncer } from '../lib/instances/index.js';
import {
  fmt,
  interleaved,
  pinSelf,
  recreateDatabase,
  seedPets,
  startServer,
  type Scenario,
  type Server,
  type ServerSpec,
  type Summary,
} from './lib.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '20' },
    pets: { type: 'string', default: '10000' },
  },
});
const log = (line: string) => process.stderr.write(`${line}\n`);
const load = {
  seconds: Number(flags.seconds),
  rounds: Number(flags.rounds),
  warmupSeconds: 1,
  connections: Number(flags.connections),
};

// Its own database (dropped and recreated), so that it never meets npm run bench's pets_bench.
const admin = new URL(process.env['DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/postgres');
admin.pathname = '/postgres';
const bench = new URL(admin);
bench.pathname = '/pets_bench_statements';
const urls = { bench: bench.toString(), admin: admin.toString() };

const key = `bench_${randomBytes(24).toString('base64url')}`;
const authorization = `Bearer ${key}`;

function ours(name: string, env: Record<string, string>, port: number): ServerSpec {
  return {
    name,
    args: ['dist/server.js'],
    env: { BOOTSTRAP_API_KEY: key, LOG_LEVEL: 'info', RATE_LIMIT_MAX: '1000000', ...env },
    port,
    cores: '1',
    authorization,
  };
}

async function main(): Promise<void> {
  const pinning = pinSelf();
  await recreateDatabase(urls);
  const maxId = await seedPets(urls.bench, Number(flags.pets));
  const scenarios: Scenario[] = [
    {
      name: 'GET /v1/pets/{id}',
      path: '/v1/pets/1',
      pathFor: () => `/v1/pets/${1 + Math.floor(Math.random() * maxId)}`,
    },
    { name: 'GET /v1/pets (limit 20)', path: '/v1/pets' },
    {
      name: 'POST /v1/pets',
      method: 'POST',
      path: '/v1/pets',
      body: JSON.stringify({ name: 'Bench', categoryId: 7, status: 'pending' }),
    },
  ];
  const specs = [
    ours('named, direct', { DATABASE_URL: urls.bench }, 3201),
    ours('unnamed, direct', { DATABASE_URL: urls.bench, DATABASE_STATEMENTS: 'unnamed' }, 3202),
  ];
  const stops: Array<() => Promise<void>> = [];
  if (missingPackages().includes('pgbouncer')) {
    log('pgbouncer is not installed: the PgBouncer column is left out');
  } else {
    const bouncer = await startPgBouncer({
      backend: { port: Number(bench.port || 5432) },
      database: 'pets_bench_statements',
    });
    stops.push(() => bouncer.remove());
    specs.push(
      ours(
        'unnamed, PgBouncer (transaction)',
        { DATABASE_URL: bouncer.url, DATABASE_STATEMENTS: 'unnamed', DATABASE_DIRECT_URL: urls.bench },
        3203,
      ),
    );
  }
  const servers: Server[] = [];
  try {
    for (const spec of specs) servers.push(await startServer(spec));
    const rows: string[] = [];
    for (const scenario of scenarios) {
      const summaries = (await interleaved(servers, scenario, { ...load, authorization }, log)) as Summary[];
      const [named] = summaries as [Summary];
      rows.push(
        `| ${scenario.name} | ${summaries.map((s) => `${fmt(s.rps)} req/s, ${fmt(s.cpuUsPerRequest)} µs CPU, p50 ${fmt(s.p50)} ms`).join(' | ')} | ${summaries
          .slice(1)
          .map((s) => `${fmt(s.cpuUsPerRequest - named.cpuUsPerRequest)} µs`)
          .join(' / ')} |`,
      );
    }
    const [one = 0, five = 0, fifteen = 0] = loadavg();
    process.stdout.write(
      [
        `${load.rounds} interleaved rounds of ${load.seconds} s, ${load.connections} connections, server on 1 core (${pinning}); medians.`,
        `Load average at the end: ${fmt(one, 2)} ${fmt(five, 2)} ${fmt(fifteen, 2)}.`,
        '',
        `| endpoint | ${servers.map((s) => s.name).join(' | ')} | service CPU per request vs named, direct |`,
        `|---|${servers.map(() => '---').join('|')}|---|`,
        ...rows,
        '',
      ].join('\n'),
    );
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    for (const stop of stops) await stop();
  }
}

await main();
