import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, loopback } from './network.js';
import { queryOn } from './queryOn.js';
import {
  isAlive,
  ownedFolder,
  serviceAccount,
  signal,
  spawnLogged,
  stopPid,
  untrack,
  waitForExit,
  waitUntil,
} from './processes.js';

/**
 * A private PgBouncer on 127.0.0.1 and a free port, configured by the repo's
 * deploy/pgbouncer.ini: the local file %includes a copy of it and then
 * overrides only what a private instance must (address, port, trust
 * authentication, where the database is). So the pool mode, sizes and
 * timeouts run here are the ones the deployment guide shows. The copy sits in
 * the instance's own folder, so PgBouncer (run as the service account) reads
 * it from any checkout, a private one under /tmp included.
 */

export const deployPgBouncerIni = fileURLToPath(new URL('../../deploy/pgbouncer.ini', import.meta.url));
export const pgbouncerBin = process.env['PGBOUNCER_BIN'] ?? 'pgbouncer';

export interface PgBouncerOptions {
  /** The PostgreSQL server to pool. */
  backend: { port: number; host?: string };
  /** The database name clients use and the server database it maps to (same name). */
  database: string;
  /** Overrides deploy/pgbouncer.ini's pool_mode (transaction). */
  poolMode?: 'session' | 'transaction' | 'statement';
  /** Further [pgbouncer] settings to override, e.g. { default_pool_size: 5 }. */
  settings?: Record<string, string | number>;
  /** The base file; deploy/pgbouncer.ini by default. */
  baseConfig?: string;
  parent?: string;
  port?: number;
  persistent?: boolean;
  readyTimeoutMs?: number;
}

export interface PgBouncerServer {
  readonly port: number;
  readonly folder: string;
  readonly configFile: string;
  readonly logFile: string;
  readonly pid: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  readonly url: string;
  /** Runs a console command (SHOW POOLS, SHOW CONFIG...) on the admin database. */
  admin<Row = Record<string, unknown>>(command: string): Promise<Row[]>;
  stop(): Promise<void>;
  kill(): Promise<void>;
  restart(): Promise<void>;
  remove(): Promise<void>;
}

/** The section a PgBouncer ini file ends in: the local file continues it. */
function lastSection(ini: string): string | undefined {
  const sections = [...ini.matchAll(/^\s*\[([^\]]+)\]/gm)].map((match) => match[1]);
  return sections.at(-1);
}

/** Where the instance's copy of the base file goes. */
export const baseCopyName = 'base-pgbouncer.ini';

/**
 * The local file. It %includes `include` (the instance's copy of the base
 * file), or the base file itself when not given.
 */
export function renderPgBouncerIni(
  options: PgBouncerOptions & { port: number; authFile: string; include?: string },
): string {
  const base = resolve(options.baseConfig ?? deployPgBouncerIni);
  const section = lastSection(readFileSync(base, 'utf8'));
  if (section !== 'pgbouncer') {
    throw new Error(
      `${base} must end in its [pgbouncer] section (it ends in [${section ?? 'none'}]): the local file appends settings to it`,
    );
  }
  const overrides: Record<string, string | number> = {
    listen_addr: loopback,
    listen_port: options.port,
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: options.authFile,
    admin_users: 'postgres',
    stats_users: 'postgres',
    ...(options.poolMode ? { pool_mode: options.poolMode } : {}),
    ...options.settings,
  };
  return [
    '; Rendered by lib/instances/pgbouncer.ts for a private instance: the repo file,',
    `; then only what differs here. Base: ${base}`,
    `%include ${options.include ?? base}`,
    ...Object.entries(overrides).map(([name, value]) => `${name} = ${value}`),
    '[databases]',
    `${options.database} = host=${options.backend.host ?? loopback} port=${options.backend.port} dbname=${options.database}`,
    '',
  ].join('\n');
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncerServer> {
  const account = serviceAccount();
  const folder = ownedFolder('pgbouncer-', account, options.parent);
  const port = options.port ?? (await freePort());
  const authFile = join(folder, 'userlist.txt');
  const configFile = join(folder, 'pgbouncer.ini');
  const logFile = join(folder, 'pgbouncer.log');
  writeFileSync(authFile, '"postgres" ""\n');
  // PgBouncer runs as the service account, which may not read the checkout
  // (a private copy's folder is 0700): it reads a copy in its own folder.
  const include = join(folder, baseCopyName);
  copyFileSync(resolve(options.baseConfig ?? deployPgBouncerIni), include);
  writeFileSync(configFile, renderPgBouncerIni({ ...options, port, authFile, include }));
  let pid = 0;

  const start = async () => {
    pid = spawnLogged({
      command: pgbouncerBin,
      args: [configFile],
      logFile,
      account,
      persistent: options.persistent === true,
      cwd: folder,
    });
    await waitUntil(
      { what: `PgBouncer on ${loopback}:${port}`, timeoutMs: options.readyTimeoutMs ?? 20_000, pid, logFile },
      async () => {
        await queryOn(port, options.database, 'SELECT 1');
        return true;
      },
    );
  };
  await start();

  const server: PgBouncerServer = {
    port,
    folder,
    configFile,
    logFile,
    get pid() {
      return pid;
    },
    url: `postgres://postgres@${loopback}:${port}/${options.database}`,
    admin: <Row>(command: string) => queryOn<Row>(port, 'pgbouncer', command),
    async stop() {
      // SIGINT: "safe shutdown", waits for clients to finish their transactions.
      if (isAlive(pid)) await stopPid(pid, 'SIGINT', 10_000);
    },
    async kill() {
      signal(pid, 'SIGKILL');
      await waitForExit(pid, 10_000);
      untrack(pid);
    },
    async restart() {
      if (isAlive(pid)) throw new Error(`PgBouncer on port ${port} still runs (pid ${pid}); stop or kill it first`);
      await start();
    },
    async remove() {
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
  return server;
}
