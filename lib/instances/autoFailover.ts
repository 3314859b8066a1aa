import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, loopback } from './network.js';
import { queryOn } from './queryOn.js';
import { postgresBin, postgresUrl } from './postgres.js';
import {
  isAlive,
  ownedFolder,
  processTree,
  runChecked,
  runCheckedAsync,
  serviceAccount,
  signal,
  spawnLogged,
  untrack,
  waitForExit,
  waitUntil,
  type Account,
} from './processes.js';

/**
 * A highly available PostgreSQL on pg_auto_failover (Debian's
 * postgresql-15-auto-failover and pg-auto-failover-cli): a monitor and three
 * data nodes, each node a `pg_autoctl run` (the manager, "keeper") that runs
 * its postmaster. Replication is synchronous (number_sync_standbys 1), so a
 * commit is acknowledged once a second node has it, and with three nodes
 * that still holds after one failover. The monitor's timeouts are tightened
 * (monitorSettings) so that a dead primary is replaced within seconds.
 * Every process listens on 127.0.0.1 and a free port, with its address
 * given (--hostname, --listen), so nothing depends on name resolution.
 */

export const pgAutoctlBin = process.env['PG_AUTOCTL_BIN'] ?? 'pg_autoctl';

/**
 * The monitor's failure detection, tightened from the defaults (a check
 * every 5 s, unhealthy after 20 s, 30 s for the old primary to demote),
 * which make a failover take about 52 s. Measured here with these: writes
 * back within about 10 s of a kill -9 of the primary node.
 */
const monitorSettings: Record<string, number> = {
  // Check each node every second; a refused connection on one host fails at once.
  'pgautofailover.health_check_period': 1000,
  'pgautofailover.health_check_timeout': 1000,
  'pgautofailover.health_check_max_retries': 1,
  'pgautofailover.health_check_retry_delay': 500,
  // A keeper reports every second: two missed reports and a failed check mean the node is gone.
  'pgautofailover.node_considered_unhealthy_timeout': 2000,
  // Must exceed the keepers' network_partition_timeout (keeperPartitionTimeoutSeconds):
  // a primary cut off from the monitor and its standbys stops itself before another is promoted.
  'pgautofailover.primary_demote_timeout': 2500,
  'pgautofailover.startup_grace_period': 1000,
};

/** Seconds a primary that reaches neither the monitor nor a standby keeps running before it demotes itself. */
const keeperPartitionTimeoutSeconds = 2;

export const formation = 'default';

export interface NodeState {
  name: string;
  port: number;
  /**
   * primary: the node that takes writes now (the monitor says primary and
   * the server accepts writes); standby: in recovery; otherwise the
   * monitor's state ("demoted", "catchingup", ...) or "unreachable".
   */
  role: string;
  /** The monitor's view: reported state / assigned state. */
  reportedState: string;
  assignedState: string;
  /** The manager (pg_autoctl run) and every process under it, the postmaster included; empty when it is not running. */
  pids: number[];
}

export interface FailoverNode {
  readonly name: string;
  readonly port: number;
  readonly dataDir: string;
  readonly logFile: string;
  /** The manager's pid (pg_autoctl run). */
  readonly pid: number;
  /** The manager and every process under it. */
  pids(): number[];
  url(database?: string): string;
  /** SIGKILL to the manager and every process under it (its postmaster and backends): the node crashes. */
  kill(): Promise<void>;
  /** Starts its manager again; it rejoins (pg_rewind) as the monitor tells it. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface FailoverCluster {
  readonly folder: string;
  readonly monitorPort: number;
  readonly monitorPid: number;
  readonly nodes: FailoverNode[];
  /** The database the service uses, on every node. */
  readonly database: string;
  states(): Promise<NodeState[]>;
  /** Waits until one node is primary and every other running node a streaming standby; returns the primary. */
  waitForHealthy(timeoutMs?: number): Promise<FailoverNode>;
  /** A planned switchover (pg_autoctl perform switchover): the primary hands over to a standby. */
  switchover(): Promise<void>;
  /** Every process, in start order, for a state file. */
  processes(): Array<{ name: string; pid: number; port: number; logFile: string }>;
  stop(): Promise<void>;
  remove(): Promise<void>;
}

interface ClusterOptions {
  parent?: string;
  persistent?: boolean;
  /** Created on the primary (and so on every node). */
  database: string;
  log?: (line: string) => void;
}

/** SIGKILL to a process and all under it (found before the first signal). */
async function killTree(pid: number): Promise<void> {
  const tree = processTree(pid);
  for (const each of tree) signal(each, 'SIGKILL');
  for (const each of tree) await waitForExit(each, 10_000);
  untrack(pid);
}

/** SIGINT to a manager (pg_autoctl's fast shutdown: its postmaster too); what is left after the timeout is killed. */
async function stopTree(pid: number, timeoutMs = 15_000): Promise<void> {
  if (!isAlive(pid)) return;
  const tree = processTree(pid);
  signal(pid, 'SIGINT');
  const ended = await waitForExit(pid, timeoutMs);
  for (const each of ended ? tree.slice(1) : tree) {
    if (isAlive(each)) signal(each, 'SIGKILL');
    await waitForExit(each, 5_000);
  }
  untrack(pid);
}

/** Whether the server on port takes writes now: not in recovery, and new transactions not read-only. */
async function writable(port: number): Promise<boolean | undefined> {
  try {
    const [row] = await queryOn<{ writable: boolean }>(
      port,
      'postgres',
      "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off' AS writable",
    );
    return row?.writable;
  } catch {
    return undefined;
  }
}

export async function startFailoverCluster(options: ClusterOptions): Promise<FailoverCluster> {
  const log = options.log ?? (() => undefined);
  const account = serviceAccount();
  const folder = ownedFolder('pg-failover-', account, options.parent);
  const persistent = options.persistent === true;
  // pg_autoctl keeps its configuration and state under the XDG folders: here, inside the cluster's folder.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    HOME: folder,
    XDG_CONFIG_HOME: join(folder, 'config'),
    XDG_DATA_HOME: join(folder, 'state'),
    XDG_RUNTIME_DIR: join(folder, 'run'),
    PG_CONFIG: join(postgresBin, 'pg_config'),
  };
  for (const dir of ['config', 'state', 'run']) {
    mkdirSync(join(folder, dir), { recursive: true });
    if (account) runChecked('chown', [`${account.uid}:${account.gid}`, join(folder, dir)]);
  }
  const pgctl = join(postgresBin, 'pg_ctl');
  const autoctl = (args: string[], timeoutMs = 120_000) =>
    runChecked(pgAutoctlBin, args, { account, env, cwd: folder, timeoutMs });
  const started: Array<{ stop(): Promise<void> }> = [];

  try {
    const monitorPort = await freePort();
    const monitorData = join(folder, 'monitor');
    log('creating the pg_auto_failover monitor');
    autoctl([
      'create',
      'monitor',
      '--pgdata',
      monitorData,
      '--pgport',
      String(monitorPort),
      '--listen',
      loopback,
      '--hostname',
      loopback,
      '--auth',
      'trust',
      '--no-ssl',
      '--pgctl',
      pgctl,
    ]);
    const monitor = manager('monitor', monitorData, monitorPort, account, env, folder, persistent);
    await monitor.start(() => queryOn(monitorPort, 'pg_auto_failover', 'SELECT 1', 'autoctl_node').then(() => true));
    started.push(monitor);
    for (const [name, value] of Object.entries(monitorSettings))
      await queryOn(monitorPort, 'pg_auto_failover', `ALTER SYSTEM SET ${name} = ${value}`);
    await queryOn(monitorPort, 'pg_auto_failover', 'SELECT pg_reload_conf()');
    const monitorUrl = `postgres://autoctl_node@${loopback}:${monitorPort}/pg_auto_failover?sslmode=disable`;

    const nodes: Array<FailoverNode & { start(): Promise<void> }> = [];
    for (const index of [1, 2, 3]) {
      const name = `node${index}`;
      const port = await freePort();
      const dataDir = join(folder, name);
      log(`creating data node ${name} (${index === 1 ? 'primary' : 'standby, by pg_basebackup'})`);
      autoctl([
        'create',
        'postgres',
        '--pgdata',
        dataDir,
        '--pgport',
        String(port),
        '--pghost',
        loopback,
        '--listen',
        loopback,
        '--hostname',
        loopback,
        '--name',
        name,
        '--monitor',
        monitorUrl,
        '--auth',
        'trust',
        '--no-ssl',
        '--pgctl',
        pgctl,
        '--dbname',
        options.database,
      ]);
      autoctl([
        'config',
        'set',
        '--pgdata',
        dataDir,
        'timeout.network_partition_timeout',
        String(keeperPartitionTimeoutSeconds),
      ]);
      const node = dataNode(name, dataDir, port, manager(name, dataDir, port, account, env, folder, persistent));
      await node.start();
      nodes.push(node);
      started.push(node);
      if (index === 2) {
        // Synchronous: a commit waits for one standby. Needs two standbys to be set, so after the second joins.
        // (pg_autoctl 2.0's `set formation number-sync-standbys` refuses any value: the monitor's function does it.)
        await queryOn(
          monitorPort,
          'pg_auto_failover',
          `SELECT pgautofailover.set_formation_number_sync_standbys('${formation}', 1)`,
          'autoctl_node',
        ).catch(() => undefined);
      }
    }

    const cluster: FailoverCluster = {
      folder,
      monitorPort,
      get monitorPid() {
        return monitor.pid;
      },
      nodes,
      database: options.database,
      states: () => nodeStates(monitorPort, nodes),
      async waitForHealthy(timeoutMs = 90_000) {
        return waitUntil({ what: 'one primary and streaming standbys', timeoutMs }, async () => {
          const states = await nodeStates(monitorPort, nodes);
          const primaries = states.filter((state) => state.role === 'primary');
          const notReady = states.filter(
            (state) => state.role !== 'primary' && (state.role !== 'standby' || state.reportedState !== 'secondary'),
          );
          if (primaries.length !== 1 || notReady.length > 0)
            throw new Error(states.map((state) => `${state.name} ${state.role} (${state.reportedState})`).join(', '));
          return nodes.find((node) => node.name === primaries[0]!.name);
        });
      },
      async switchover() {
        // Not autoctl (spawnSync): the caller's clients keep running while pg_autoctl waits for the new primary.
        await runCheckedAsync(
          pgAutoctlBin,
          ['perform', 'switchover', '--pgdata', monitorData, '--formation', formation],
          { account, env, cwd: folder, timeoutMs: 120_000 },
        );
      },
      processes: () => [
        { name: 'pg-monitor', pid: monitor.pid, port: monitorPort, logFile: monitor.logFile },
        ...nodes.map((node) => ({ name: `pg-${node.name}`, pid: node.pid, port: node.port, logFile: node.logFile })),
      ],
      async stop() {
        // The data nodes together, then the monitor.
        await Promise.all(nodes.map((node) => node.stop().catch(() => undefined)));
        await monitor.stop().catch(() => undefined);
      },
      async remove() {
        await cluster.stop();
        rmSync(folder, { recursive: true, force: true });
      },
    };
    // The formation is synchronous only once the monitor has applied number_sync_standbys.
    await queryOn(
      monitorPort,
      'pg_auto_failover',
      `SELECT pgautofailover.set_formation_number_sync_standbys('${formation}', 1)`,
      'autoctl_node',
    );
    await cluster.waitForHealthy();
    return cluster;
  } catch (error) {
    for (const item of [...started].reverse()) await item.stop().catch(() => undefined);
    if (!options.parent) rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

interface Manager {
  readonly pid: number;
  readonly logFile: string;
  start(ready: () => Promise<true | undefined>): Promise<void>;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** A `pg_autoctl run` on one data directory. */
function manager(
  name: string,
  dataDir: string,
  port: number,
  account: Account | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
  persistent: boolean,
): Manager {
  const logFile = join(cwd, `${name}.log`);
  let pid = 0;
  return {
    get pid() {
      return pid;
    },
    logFile,
    async start(ready) {
      pid = spawnLogged({
        command: pgAutoctlBin,
        args: ['run', '--pgdata', dataDir],
        env,
        logFile,
        account,
        persistent,
        cwd,
      });
      await waitUntil({ what: `pg_autoctl ${name} on port ${port}`, timeoutMs: 90_000, pid, logFile }, ready);
    },
    stop: () => stopTree(pid),
    kill: () => killTree(pid),
  };
}

function dataNode(
  name: string,
  dataDir: string,
  port: number,
  keeper: Manager,
): FailoverNode & { start(): Promise<void> } {
  const start = () =>
    keeper.start(async () => {
      // Up once its server answers (as a primary or a standby).
      await queryOn(port, 'postgres', 'SELECT 1');
      return true;
    });
  return {
    name,
    port,
    dataDir,
    logFile: keeper.logFile,
    get pid() {
      return keeper.pid;
    },
    pids: () => (keeper.pid && isAlive(keeper.pid) ? processTree(keeper.pid) : []),
    url: (database?: string) => postgresUrl(port, database),
    kill: () => keeper.kill(),
    async restart() {
      if (isAlive(keeper.pid)) throw new Error(`${name} still runs (pid ${keeper.pid}); stop or kill it first`);
      await start();
    },
    start,
    stop: () => keeper.stop(),
  };
}

interface MonitorRow {
  nodename: string;
  nodeport: number;
  reportedstate: string;
  goalstate: string;
}

/** Each node as the monitor and the node itself see it now. */
export async function nodeStates(
  monitorPort: number,
  nodes: ReadonlyArray<Pick<FailoverNode, 'name' | 'port' | 'pids'>>,
): Promise<NodeState[]> {
  const rows = await queryOn<MonitorRow>(
    monitorPort,
    'pg_auto_failover',
    `SELECT nodename, nodeport, reportedstate::text, goalstate::text FROM pgautofailover.node WHERE formationid = '${formation}' ORDER BY nodeid`,
    'autoctl_node',
  );
  return Promise.all(
    nodes.map(async (node) => {
      const row = rows.find((entry) => entry.nodename === node.name);
      const reportedState = row?.reportedstate ?? 'unknown';
      const assignedState = row?.goalstate ?? 'unknown';
      const takesWrites = await writable(node.port);
      const role =
        takesWrites === true && ['primary', 'wait_primary'].includes(assignedState)
          ? 'primary'
          : takesWrites === false && ['secondary', 'catchingup'].includes(reportedState)
            ? 'standby'
            : takesWrites === undefined
              ? `unreachable (${reportedState})`
              : reportedState;
      return { name: node.name, port: node.port, role, reportedState, assignedState, pids: node.pids() };
    }),
  );
}
