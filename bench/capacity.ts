// npm run bench -- capacity [--seconds 10 --clients 8 --repeat 2 --pets 100000]: PostgreSQL's own cost
// and ceiling for each statement the service sends (bench/pgbench/*.sql), measured with pgbench on a
// private PostgreSQL 15 cluster (lib/instances), named (-M prepared) and unnamed (-M extended).
// Besides transactions per second (which depend on what else runs on the machine), it reports the
// server's CPU per statement (every PostgreSQL process's utime + stime, connections that came and
// went included), which a busy machine disturbs much less. The numbers feed docs/scaling.md.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  missingPackages,
  processTree,
  startPgBouncer,
  startPostgres,
  type PostgresServer,
} from '../lib/instances/index.js';
import { repoRoot } from '../lib/repoRoot.js';
import { openDatabase } from '../src/db/index.js';
import { migrate } from '../src/db/migrations.js';
import { cpuSeconds, fmt, median, seedPets, serverCpuSeconds } from './lib.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    clients: { type: 'string', default: '8' },
    repeat: { type: 'string', default: '2' },
    pets: { type: 'string', default: '100000' },
    'insert-clients': { type: 'string', default: '1,8,32' },
  },
});
const log = (line: string) => process.stderr.write(`${line}\n`);

const scripts = ['select_by_id', 'list_after', 'list_by_status', 'insert', 'mix'] as const;
const modes = { named: 'prepared', unnamed: 'extended' } as const;

const loadNow = () =>
  loadavg()
    .map((value) => fmt(value, 1))
    .join(' ');

interface Run {
  tps: number;
  /** Server CPU per transaction, µs. */
  cpuUs: number;
  load: string;
}

/**
 * Waits (at most 10 s) until the cluster has as few processes as before a
 * run: the backends of pgbench's connections have exited and been reaped,
 * so that their CPU is in the postmaster's cutime, counted once.
 */
async function settled(server: PostgresServer, processes: number): Promise<void> {
  for (let waited = 0; waited < 10_000 && processTree(server.pid).length > processes; waited += 20) await sleep(20);
}

/** One pgbench run on the private cluster, with the cluster's CPU across it. */
async function pgbench(
  server: PostgresServer,
  script: string,
  mode: string,
  clients: number,
  maxId: number,
  port = server.port,
): Promise<Run & { seconds: number }> {
  const load = loadNow();
  const processes = processTree(server.pid).length;
  const cpuBefore = serverCpuSeconds(server.pid);
  const result = spawnSync(
    'pgbench',
    [
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-U',
      'postgres',
      '-n',
      '-M',
      mode,
      '-c',
      String(clients),
      '-j',
      '1',
      '-T',
      flags.seconds,
      '-D',
      `maxid=${maxId}`,
      '-f',
      join(repoRoot, `bench/pgbench/${script}.sql`),
      'pets',
    ],
    { encoding: 'utf8' },
  );
  await settled(server, processes);
  const cpu = serverCpuSeconds(server.pid) - cpuBefore;
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(result.stdout)?.[1];
  const processed = /number of transactions actually processed: (\d+)/.exec(result.stdout)?.[1];
  if (result.status !== 0 || tps === undefined || processed === undefined)
    throw new Error(`pgbench ${script} failed (${result.status}): ${result.stderr || result.stdout}`);
  return { tps: Number(tps), cpuUs: (cpu * 1e6) / Number(processed), load, seconds: Number(processed) / Number(tps) };
}

const cell = (runs: Run[]) =>
  `${fmt(median(runs.map((run) => run.tps)))} tps, ${fmt(median(runs.map((run) => run.cpuUs)), 1)} µs`;

async function main(): Promise<void> {
  const server = await startPostgres();
  try {
    await server.query('CREATE DATABASE pets');
    const db = await openDatabase({ url: server.url('pets'), poolSize: 1 });
    await migrate(db);
    await db.close();
    const maxId = await seedPets(server.url('pets'), Number(flags.pets));
    const [settings] = await server.query<{ settings: string }>(
      "SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) AS settings FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'shared_buffers')",
    );
    const clients = Number(flags.clients);
    const repeat = Number(flags.repeat);
    const rows: string[] = [];
    const loads: string[] = [];
    for (const script of scripts) {
      const cells: string[] = [];
      for (const [label, mode] of Object.entries(modes)) {
        const runs: Run[] = [];
        for (let run = 0; run < repeat; run += 1) runs.push(await pgbench(server, script, mode, clients, maxId));
        for (const run of runs) loads.push(run.load);
        log(
          `${script} ${label}: ${runs.map((run) => `${fmt(run.tps)} tps, ${fmt(run.cpuUs, 1)} µs (load ${run.load})`).join('; ')}`,
        );
        cells.push(cell(runs));
      }
      rows.push(`| ${script} | ${cells.join(' | ')} |`);
    }
    const insertRows: string[] = [];
    for (const count of flags['insert-clients'].split(',').map(Number)) {
      const run = await pgbench(server, 'insert', modes.named, count, maxId);
      log(`insert with ${count} clients: ${fmt(run.tps)} tps, ${fmt(run.cpuUs, 1)} µs (load ${run.load})`);
      insertRows.push(`| ${count} | ${fmt(run.tps)} | ${fmt(run.cpuUs, 1)} | ${run.load} |`);
    }
    // PgBouncer (transaction mode, deploy/pgbouncer.ini) in front: its own CPU per statement.
    let poolerLine = 'PgBouncer: not installed, not measured.';
    if (!missingPackages().includes('pgbouncer')) {
      const bouncer = await startPgBouncer({ backend: { port: server.port }, database: 'pets' });
      try {
        const before = cpuSeconds(bouncer.pid);
        const run = await pgbench(server, 'select_by_id', modes.unnamed, clients, maxId, bouncer.port);
        const perStatement = ((cpuSeconds(bouncer.pid) - before) * 1e6) / (run.tps * run.seconds);
        poolerLine = `PgBouncer 1.18 (transaction mode) in front, select_by_id unnamed: ${fmt(run.tps)} tps, PgBouncer CPU ${fmt(perStatement, 1)} µs per statement, PostgreSQL CPU ${fmt(run.cpuUs, 1)} µs (load before ${run.load}).`;
        log(poolerLine);
      } finally {
        await bouncer.remove();
      }
    }
    process.stdout.write(
      [
        `Private PostgreSQL cluster (${settings?.settings ?? ''}) on this host, ${flags.pets} pets;`,
        `pgbench -c ${clients} -j 1 -T ${flags.seconds}, medians of ${repeat} runs; load average (1/5/15 min) before the runs: ${loads[0]} ... ${loads.at(-1)}.`,
        'Each cell: transactions (= statements) per second, and PostgreSQL CPU per statement (all its processes).',
        '',
        '| statement | named (-M prepared) | unnamed (-M extended) |',
        '|---|---|---|',
        ...rows,
        '',
        '| INSERT clients | tps (named) | PostgreSQL CPU µs per INSERT | load before |',
        '|---|---|---|---|',
        ...insertRows,
        '',
        poolerLine,
        '',
      ].join('\n'),
    );
  } finally {
    await server.remove();
  }
}

await main();
