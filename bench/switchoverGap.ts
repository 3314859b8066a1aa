// npm run bench -- switchover-gap [--switchovers 2]: where a planned switchover's write gap goes, on
// the failover topology's database tier alone (pg_auto_failover monitor and three synchronous data
// nodes, PgBouncer beside each, deploy/haproxy-postgres.cfg in front; no service). Measured apart:
// (a) the engine: single INSERTs every 20 ms on each node's PostgreSQL directly, so the gap is from
//     the last commit on the old primary to the first on the new one;
// (b) the balancer: when the write route marks the old node down and the new one up (its stats
//     socket polled every 20 ms);
// (c) a client through the route: single INSERTs every 20 ms, reconnecting at once after an error;
// and the monitor's events (pgautofailover.event) with their times. See docs/scaling.md.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import {
  startFailoverCluster,
  startPgBouncer,
  startPostgresRouter,
  type FailoverCluster,
} from '../lib/instances/index.js';
import { queryOn } from '../lib/instances/queryOn.js';

const { values: flags } = parseArgs({ options: { switchovers: { type: 'string', default: '2' } } });
const log = (line: string) => process.stderr.write(`${line}\n`);
const database = 'gap';
const intervalMs = 20;

/** Single INSERTs every intervalMs on one connection, reopened at once after an error; the times of each commit. */
function inserter(url: string, label: string) {
  const commits: number[] = [];
  const errors: Array<{ at: number; what: string }> = [];
  let running = true;
  let client: pg.Client | undefined;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      try {
        if (!client) {
          const fresh = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000, query_timeout: 5000 });
          fresh.on('error', () => undefined);
          client = fresh;
          await fresh.connect();
        }
        await client.query('INSERT INTO ticks (source) VALUES ($1)', [label]);
        commits.push(Date.now());
      } catch (error) {
        const code = (error as { code?: string }).code ?? '';
        errors.push({ at: Date.now(), what: `${code} ${(error as Error).message}`.trim().slice(0, 80) });
        void client?.end().catch(() => undefined);
        client = undefined;
      }
      await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
    await client?.end().catch(() => undefined);
  })();
  return {
    commits,
    errors,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** The longest time between commits within [from, to], and where it began. */
function longestGap(commits: number[], from: number, to: number): { ms: number; start: number; end: number } {
  const times = [from, ...commits.filter((at) => at > from && at < to), to].sort((a, b) => a - b);
  let best = { ms: 0, start: from, end: from };
  for (let index = 1; index < times.length; index += 1) {
    const ms = times[index]! - times[index - 1]!;
    if (ms > best.ms) best = { ms, start: times[index - 1]!, end: times[index]! };
  }
  return best;
}

async function primaryPort(cluster: FailoverCluster): Promise<number> {
  const primary = (await cluster.states()).find((state) => state.role === 'primary');
  if (!primary) throw new Error('no primary');
  return primary.port;
}

async function main(): Promise<void> {
  log(
    `load average before: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
  );
  const cluster = await startFailoverCluster({ database, log });
  const poolers = await Promise.all(
    cluster.nodes.map((node) => startPgBouncer({ backend: { port: node.port }, database })),
  );
  const router = await startPostgresRouter({
    nodes: cluster.nodes.map((node, index) => ({ postgresPort: node.port, poolerPort: poolers[index]!.port })),
  });
  try {
    await router.waitForPrimary();
    await queryOn(
      await primaryPort(cluster),
      database,
      'CREATE TABLE ticks (id bigserial PRIMARY KEY, source text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())',
    );
    for (let round = 1; round <= Number(flags.switchovers); round += 1) {
      await cluster.waitForHealthy(120_000);
      await router.waitForPrimary();
      const direct = cluster.nodes.map((node) => inserter(node.url(database), node.name));
      const routed = inserter(router.primaryUrl(database), 'route');
      const routeChanges: Array<{ at: number; up: string }> = [];
      let polling = true;
      const poller = (async () => {
        let last = '';
        while (polling) {
          const up = (await router.writableNodes().catch(() => ['?'])).join(',');
          if (up !== last) routeChanges.push({ at: Date.now(), up: up || 'none' });
          last = up;
          await sleep(intervalMs);
        }
      })();
      await sleep(2_000);
      const [{ now: monitorStart } = { now: '' }] = await queryOn<{ now: string }>(
        cluster.monitorPort,
        'pg_auto_failover',
        'SELECT now()::text AS now',
      );
      const logLinesBefore = readFileSync(router.haproxy.logFile, 'utf8').split('\n').length - 1;
      const startedAt = Date.now();
      await cluster.switchover();
      const returnedAt = Date.now();
      await sleep(4_000);
      const endedAt = Date.now();
      polling = false;
      await poller;
      await Promise.all([...direct, routed].map((each) => each.stop()));
      const allDirect = direct.flatMap((each) => each.commits).sort((a, b) => a - b);
      const engine = longestGap(allDirect, startedAt, endedAt);
      const route = longestGap(routed.commits, startedAt, endedAt);
      const at = (time: number) => `+${time - startedAt} ms`;
      log(`\nswitchover ${round}: pg_autoctl perform switchover returned ${at(returnedAt)}`);
      log(`(a) engine: no commit on any node from ${at(engine.start)} to ${at(engine.end)}: ${engine.ms} ms`);
      for (const each of direct) {
        const last = each.commits.filter((time) => time > startedAt).at(-1);
        const first = each.commits.find((time) => time > engine.start);
        log(
          `    ${cluster.nodes[direct.indexOf(each)]!.name}: commits ${each.commits.filter((time) => time > startedAt).length}, last ${last ? at(last) : '-'}, first after the gap ${first ? at(first) : '-'}`,
        );
        const kinds = new Map<string, number[]>();
        for (const error of each.errors.filter((entry) => entry.at > startedAt)) {
          const key = error.what.replace(/\d+/g, 'N');
          kinds.set(key, [...(kinds.get(key) ?? []), error.at]);
        }
        for (const [what, times] of kinds)
          log(`      ${times.length} x ${what} (${at(times[0]!)} .. ${at(times.at(-1)!)})`);
      }
      log(`(b) balancer write route: ${routeChanges.map((change) => `${at(change.at)} ${change.up}`).join('; ')}`);
      log(`(c) client through the route: no commit from ${at(route.start)} to ${at(route.end)}: ${route.ms} ms`);
      const routeErrors = new Map<string, number>();
      for (const error of routed.errors.filter((entry) => entry.at > startedAt)) {
        const key = error.what.replace(/\d+/g, 'N');
        routeErrors.set(key, (routeErrors.get(key) ?? 0) + 1);
      }
      for (const [what, times] of routeErrors) log(`      ${times} x ${what}`);
      const haproxyLog = readFileSync(router.haproxy.logFile, 'utf8').split('\n');
      for (const line of haproxyLog
        .slice(logLinesBefore)
        .filter((entry) => /postgres_primary\/.* is (UP|DOWN)/.test(entry)))
        log(`    haproxy: ${line.trim()}`);
      const events = await queryOn<{ ms: string; nodename: string; reportedstate: string; goalstate: string }>(
        cluster.monitorPort,
        'pg_auto_failover',
        `SELECT round(extract(epoch FROM eventtime - '${monitorStart}'::timestamptz) * 1000)::text AS ms, nodename, reportedstate::text, goalstate::text FROM pgautofailover.event WHERE eventtime > '${monitorStart}'::timestamptz ORDER BY eventid`,
      );
      log('monitor events (ms after the monitor clock at the start; the call began about then):');
      for (const event of events)
        log(`    +${event.ms} ms ${event.nodename} reported ${event.reportedstate}, goal ${event.goalstate}`);
    }
  } finally {
    log(
      `load average after: ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}`,
    );
    await router.stop().catch(() => undefined);
    await Promise.all(poolers.map((pooler) => pooler.remove().catch(() => undefined)));
    await cluster.remove();
  }
}

await main();
