import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { exchange, freePort, loopback } from './network.js';
import { isAlive, ownedFolder, signal, spawnLogged, stopPid, untrack, waitForExit, waitUntil } from './processes.js';

/** A private redis-server on 127.0.0.1 and a free port, in memory only (no RDB, no AOF). */

export interface RedisOptions {
  /** Where its folder (redis.log) is made; the system temporary folder by default. */
  parent?: string;
  port?: number;
  persistent?: boolean;
  readyTimeoutMs?: number;
}

export interface RedisServer {
  readonly port: number;
  readonly folder: string;
  readonly logFile: string;
  /** A new pid after restart(). */
  readonly pid: number;
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** SIGKILL and wait. */
  kill(): Promise<void>;
  /** SIGSTOP: the port still accepts connections, nothing answers. */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Starts again, empty, on the same port (after stop() or kill()). */
  restart(): Promise<void>;
  remove(): Promise<void>;
}

export const redisServerBin = process.env['REDIS_SERVER_BIN'] ?? 'redis-server';

async function pong(port: number): Promise<true> {
  const answer = await exchange(port, 'PING\r\n', /\r\n/);
  if (!answer.startsWith('+PONG')) throw new Error(`PING answered ${JSON.stringify(answer.trim())}`);
  return true;
}

export async function startRedis(options: RedisOptions = {}): Promise<RedisServer> {
  const folder = ownedFolder('redis-', undefined, options.parent);
  const port = options.port ?? (await freePort());
  const logFile = join(folder, 'redis.log');
  let pid = 0;

  const start = async () => {
    pid = spawnLogged({
      command: redisServerBin,
      args: [
        '--port',
        String(port),
        '--bind',
        loopback,
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        folder,
        '--daemonize',
        'no',
        '--protected-mode',
        'yes',
      ],
      logFile,
      persistent: options.persistent === true,
      cwd: folder,
    });
    await waitUntil(
      { what: `Redis on ${loopback}:${port}`, timeoutMs: options.readyTimeoutMs ?? 20_000, pid, logFile },
      () => pong(port),
    );
  };
  await start();

  const server: RedisServer = {
    port,
    folder,
    logFile,
    get pid() {
      return pid;
    },
    url: `redis://${loopback}:${port}`,
    async stop() {
      if (isAlive(pid)) {
        // A stopped process cannot act on SIGTERM.
        signal(pid, 'SIGCONT');
        await stopPid(pid, 'SIGTERM');
      }
    },
    async kill() {
      signal(pid, 'SIGKILL');
      await waitForExit(pid, 10_000);
      untrack(pid);
    },
    pause: () => {
      signal(pid, 'SIGSTOP');
    },
    resume: () => {
      signal(pid, 'SIGCONT');
    },
    async restart() {
      if (isAlive(pid)) throw new Error(`Redis on port ${port} still runs (pid ${pid}); stop or kill it first`);
      await start();
    },
    async remove() {
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
  return server;
}
