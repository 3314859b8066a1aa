import { appendFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, loopback } from './network.js';
import { queryOn } from './queryOn.js';
import {
  childPids,
  isAlive,
  ownedFolder,
  runChecked,
  serviceAccount,
  signal,
  spawnLogged,
  stopPid,
  untrack,
  waitForExit,
  waitUntil,
} from './processes.js';

/**
 * A private PostgreSQL 15 cluster: initdb into a new folder, one postmaster
 * on 127.0.0.1 and a free port, trust authentication, WAL fit for streaming
 * replicas. Runs as the `postgres` account when we are root.
 */

export const postgresBin = process.env['POSTGRES_BIN'] ?? '/usr/lib/postgresql/15/bin';

export interface PostgresOptions {
  /** Where its folder (data/ and postgres.log) is made; the system temporary folder by default. */
  parent?: string;
  port?: number;
  /** Extra postgresql.conf settings. */
  settings?: Record<string, string | number>;
  /** Keep running after this Node.js process exits (npm run topology -- up). */
  persistent?: boolean;
  readyTimeoutMs?: number;
}

export interface PostgresServer {
  readonly role: 'primary' | 'replica';
  readonly port: number;
  /** Holds data/ and postgres.log. */
  readonly folder: string;
  readonly dataDir: string;
  readonly logFile: string;
  /** The postmaster's pid; a new one after restart(). */
  readonly pid: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  /** One query on a fresh connection (for setup and checks, not for load). */
  query<Row = Record<string, unknown>>(sql: string, database?: string): Promise<Row[]>;
  /** Fast shutdown (SIGINT): open sessions are cut, the cluster stops cleanly. */
  stop(): Promise<void>;
  /** A crash: SIGKILL to the postmaster and every process it started. */
  kill(): Promise<void>;
  /** Starts again on the same data and port (after stop() or kill()). */
  restart(): Promise<void>;
  /** Stops it if running and deletes its folder. */
  remove(): Promise<void>;
}

const baseSettings: Record<string, string | number> = {
  listen_addresses: `'${loopback}'`,
  // TCP only: the machine's own cluster owns the usual socket folder.
  unix_socket_directories: "''",
  fsync: 'on',
  wal_level: 'replica',
  max_wal_senders: 5,
  hot_standby: 'on',
  max_connections: 100,
  logging_collector: 'off',
  log_line_prefix: "'%m [%p] '",
};

function renderSettings(settings: Record<string, string | number>): string {
  return `\n# Added by lib/instances for a private test cluster.\n${Object.entries(settings)
    .map(([name, value]) => `${name} = ${value}`)
    .join('\n')}\n`;
}

export function postgresUrl(port: number, database = 'postgres'): string {
  return `postgres://postgres@${loopback}:${port}/${database}`;
}

/**
 * A handle over a postmaster on `dataDir`; `start` runs it. `ready` says when
 * a started server may be used (a replica also waits for streaming).
 */
function cluster(
  role: 'primary' | 'replica',
  folder: string,
  port: number,
  options: PostgresOptions,
): PostgresServer & { start(): Promise<void> } {
  const account = serviceAccount();
  const dataDir = join(folder, 'data');
  const logFile = join(folder, 'postgres.log');
  let pid = 0;

  const ready = async (): Promise<true | undefined> => {
    const [row] = await queryOn<{ recovering: boolean; receiving: string | null }>(
      port,
      'postgres',
      'SELECT pg_is_in_recovery() AS recovering, (SELECT status FROM pg_stat_wal_receiver LIMIT 1) AS receiving',
    );
    if (!row) return undefined;
    if (role === 'primary') return row.recovering ? undefined : true;
    if (!row.recovering) throw new Error('the replica is not in recovery (standby.signal missing?)');
    if (row.receiving !== 'streaming') throw new Error(`WAL receiver is ${row.receiving ?? 'not running'}`);
    return true;
  };

  const handle = {
    role,
    port,
    folder,
    dataDir,
    logFile,
    get pid() {
      return pid;
    },
    url: (database?: string) => postgresUrl(port, database),
    query: <Row>(sql: string, database?: string) => queryOn<Row>(port, database ?? 'postgres', sql),
    async start() {
      pid = spawnLogged({
        command: join(postgresBin, 'postgres'),
        args: ['-D', dataDir, '-p', String(port)],
        logFile,
        account,
        persistent: options.persistent === true,
        cwd: folder,
      });
      await waitUntil(
        {
          what: `PostgreSQL ${role} on ${loopback}:${port}`,
          timeoutMs: options.readyTimeoutMs ?? 60_000,
          pid,
          logFile,
        },
        ready,
      );
    },
    async stop() {
      if (pid && isAlive(pid)) await stopPid(pid, 'SIGINT', 30_000);
    },
    async kill() {
      if (!pid || !isAlive(pid)) return;
      // Its children would otherwise hold the shared memory and block a restart.
      const children = childPids(pid);
      signal(pid, 'SIGKILL');
      for (const child of children) signal(child, 'SIGKILL');
      await waitForExit(pid, 10_000);
      for (const child of children) await waitForExit(child, 10_000);
      untrack(pid);
    },
    async restart() {
      if (pid && isAlive(pid))
        throw new Error(`PostgreSQL ${role} on port ${port} still runs (pid ${pid}); stop or kill it first`);
      await handle.start();
    },
    async remove() {
      await handle.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
  return handle;
}

/** initdb and start a primary; resolves once it answers queries. */
export async function startPostgres(options: PostgresOptions = {}): Promise<PostgresServer> {
  const account = serviceAccount();
  const folder = ownedFolder('pg-primary-', account, options.parent);
  const port = options.port ?? (await freePort());
  const dataDir = join(folder, 'data');
  runChecked(
    join(postgresBin, 'initdb'),
    ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
    { account, cwd: folder },
  );
  appendFileSync(join(dataDir, 'postgresql.conf'), renderSettings({ ...baseSettings, ...options.settings }));
  const server = cluster('primary', folder, port, options);
  await server.start();
  return server;
}

/**
 * A streaming replica of `primary`: pg_basebackup -R (standby.signal and
 * primary_conninfo), then started on its own port; resolves once it streams.
 */
export async function startReplica(
  primary: Pick<PostgresServer, 'port'>,
  options: PostgresOptions = {},
): Promise<PostgresServer> {
  const account = serviceAccount();
  const folder = ownedFolder('pg-replica-', account, options.parent);
  const port = options.port ?? (await freePort());
  const dataDir = join(folder, 'data');
  runChecked(
    join(postgresBin, 'pg_basebackup'),
    [
      '-h',
      loopback,
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      dataDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ],
    { account, cwd: folder },
  );
  if (options.settings) appendFileSync(join(dataDir, 'postgresql.conf'), renderSettings(options.settings));
  const server = cluster('replica', folder, port, options);
  await server.start();
  return server;
}

/** Waits until the replica has replayed everything the primary had written when called. */
export async function waitForReplay(
  primary: PostgresServer,
  replica: PostgresServer,
  timeoutMs = 30_000,
): Promise<void> {
  const [target] = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  await waitUntil(
    { what: `replica on port ${replica.port} replaying up to ${target!.lsn}`, timeoutMs, logFile: replica.logFile },
    async () => {
      const [row] = await replica.query<{ done: boolean }>(
        `SELECT pg_last_wal_replay_lsn() >= '${target!.lsn}'::pg_lsn AS done`,
      );
      return row?.done ? true : undefined;
    },
  );
}
