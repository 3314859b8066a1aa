import { rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { accepts, freePort, loopback } from './network.js';
import {
  isAlive,
  ownedFolder,
  runChecked,
  socketFolder,
  signal,
  spawnLogged,
  stopPid,
  untrack,
  waitForExit,
  waitUntil,
} from './processes.js';

/**
 * A private HAProxy running the repo's deploy/haproxy.cfg as it is: the
 * addresses come in through the environment variables the file expands
 * (PETS_LISTEN, PETS_SERVER_1..3, HAPROXY_STATS_SOCKET).
 */

export const deployHaproxyCfg = fileURLToPath(new URL('../../deploy/haproxy.cfg', import.meta.url));
export const haproxyBin = process.env['HAPROXY_BIN'] ?? 'haproxy';

export interface HaproxyOptions {
  /** host:port of each backend server, in order (PETS_SERVER_1, _2, ...). */
  servers: string[];
  /** deploy/haproxy.cfg by default. */
  configFile?: string;
  /** More variables the configuration file expands (another file's addresses). */
  environment?: Record<string, string>;
  parent?: string;
  port?: number;
  persistent?: boolean;
  readyTimeoutMs?: number;
}

export interface ServerStatus {
  /** The server's name in the file (app1, app2, ...). */
  name: string;
  /** UP, DOWN, MAINT, "UP 1/2" (going down), "DOWN 1/2" (going up), no check... */
  status: string;
  /** Requests it has answered so far. */
  requests: number;
}

export interface HaproxyServer {
  readonly port: number;
  readonly pid: number;
  readonly folder: string;
  readonly logFile: string;
  readonly statsSocket: string;
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  /** One command on the admin socket ("show stat", "disable server pets_instances/app1"...). */
  command(line: string): Promise<string>;
  /** Each server of the backend (pets_instances by default) with its check status. */
  servers(backend?: string): Promise<ServerStatus[]>;
  /** Waits until every server is UP (as the balancer sees it). */
  waitForAllUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
  kill(): Promise<void>;
  remove(): Promise<void>;
}

/** The environment deploy/haproxy.cfg expects. */
export function haproxyEnvironment(listen: string, servers: string[], statsSocket: string): Record<string, string> {
  return {
    PETS_LISTEN: listen,
    HAPROXY_STATS_SOCKET: statsSocket,
    ...Object.fromEntries(servers.map((server, index) => [`PETS_SERVER_${index + 1}`, server])),
  };
}

/** Sends one command to an HAProxy admin socket and resolves with the answer. */
export function haproxyCommand(path: string, line: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const socket = createConnection({ path });
    let received = '';
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`no answer on ${path} to "${line}" within ${timeoutMs} ms`));
    });
    socket.on('error', reject);
    socket.on('connect', () => socket.end(`${line}\n`));
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('close', () => {
      resolvePromise(received);
    });
  });
}

/** Parses "show stat" CSV into the servers of one backend. */
export function parseServerStats(csv: string, backend = 'pets_instances'): ServerStatus[] {
  const [header, ...rows] = csv.trim().split('\n');
  const names = (header ?? '').replace(/^# /, '').split(',');
  const column = (name: string) => names.indexOf(name);
  return rows
    .map((row) => row.split(','))
    .filter(
      (fields) =>
        fields[column('pxname')] === backend && !['FRONTEND', 'BACKEND'].includes(fields[column('svname')] ?? ''),
    )
    .map((fields) => ({
      name: fields[column('svname')] ?? '',
      status: fields[column('status')] ?? '',
      requests: Number(fields[column('stot')] ?? 0),
    }));
}

export async function startHaproxy(options: HaproxyOptions): Promise<HaproxyServer> {
  const folder = ownedFolder('haproxy-', undefined, options.parent);
  const port = options.port ?? (await freePort());
  const configFile = resolve(options.configFile ?? deployHaproxyCfg);
  const logFile = join(folder, 'haproxy.log');
  // Not in `folder`: a socket path under a deep checkout is past HAProxy's limit.
  const statsFolder = socketFolder('pets-haproxy-');
  const statsSocket = join(statsFolder, 'admin.sock');
  const env = {
    ...process.env,
    ...haproxyEnvironment(`${loopback}:${port}`, options.servers, statsSocket),
    ...options.environment,
  };
  // A configuration error is reported at once, with HAProxy's own words
  // (no -q: it would hide them and leave only the exit status).
  try {
    runChecked(haproxyBin, ['-c', '-f', configFile], { env });
  } catch (error) {
    rmSync(statsFolder, { recursive: true, force: true });
    throw error;
  }
  // -db: stay in the foreground, so the pid is HAProxy's own.
  const pid = spawnLogged({
    command: haproxyBin,
    args: ['-db', '-f', configFile],
    env,
    logFile,
    persistent: options.persistent === true,
    cwd: folder,
  });
  await waitUntil(
    { what: `HAProxy on ${loopback}:${port}`, timeoutMs: options.readyTimeoutMs ?? 20_000, pid, logFile },
    async () => ((await accepts(port)) ? true : undefined),
  );

  const server: HaproxyServer = {
    port,
    pid,
    folder,
    logFile,
    statsSocket,
    origin: `http://${loopback}:${port}`,
    command: (line) => haproxyCommand(statsSocket, line),
    servers: async (backend) => parseServerStats(await haproxyCommand(statsSocket, 'show stat'), backend),
    async waitForAllUp(timeoutMs = 30_000) {
      await waitUntil({ what: 'HAProxy seeing every instance UP', timeoutMs, pid, logFile }, async () => {
        const servers = await server.servers();
        const notUp = servers.filter((entry) => entry.status !== 'UP');
        if (servers.length === 0 || notUp.length > 0)
          throw new Error(notUp.map((entry) => `${entry.name} ${entry.status}`).join(', ') || 'no servers');
        return true;
      });
    },
    async stop() {
      // SIGUSR1: soft stop, in-flight requests finish.
      if (isAlive(pid)) await stopPid(pid, 'SIGUSR1', 10_000);
      rmSync(statsFolder, { recursive: true, force: true });
    },
    async kill() {
      signal(pid, 'SIGKILL');
      await waitForExit(pid, 10_000);
      untrack(pid);
      rmSync(statsFolder, { recursive: true, force: true });
    },
    async remove() {
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
  return server;
}
