import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../repoRoot.js';
import { freePort, loopback } from './network.js';
import { isAlive, ownedFolder, signal, spawnLogged, stopPid, untrack, waitForExit, waitUntil } from './processes.js';

/**
 * One instance of the built service (`node dist/server.js`) on 127.0.0.1 and
 * a free port. Its environment is exactly what the caller gives (plus PATH
 * and the locale), so nothing leaks in from the shell that started it.
 */

export const builtServer = join(repoRoot, 'dist', 'server.js');

export interface ServiceOptions {
  /** The service's settings (DATABASE_URL, REDIS_URL, ...); PORT and HOST are set here. */
  env: Record<string, string>;
  /** A name for the log folder (app1...). */
  name?: string;
  entry?: string;
  parent?: string;
  port?: number;
  persistent?: boolean;
  readyTimeoutMs?: number;
}

export interface ServiceInstance {
  readonly name: string;
  readonly port: number;
  readonly pid: number;
  readonly folder: string;
  readonly logFile: string;
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  /** The environment it runs with. */
  readonly env: Readonly<Record<string, string>>;
  /** Where its /metrics listens on 127.0.0.1 (undefined with METRICS_PORT off or 0). */
  readonly metricsPort: number | undefined;
  /** SIGTERM (the service drains, then exits); resolves when it has exited, SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
  /** Starts again on the same port with the same environment; resolves once /readyz answers 200. */
  restart(): Promise<void>;
  remove(): Promise<void>;
}

async function readyz(origin: string): Promise<true> {
  const response = await fetch(`${origin}/readyz`, { signal: AbortSignal.timeout(2_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`/readyz answered ${response.status} ${text.slice(0, 200)}`);
  return true;
}

export async function startService(options: ServiceOptions): Promise<ServiceInstance> {
  const name = options.name ?? 'service';
  const folder = ownedFolder(`${name}-`, undefined, options.parent);
  const port = options.port ?? (await freePort());
  const logFile = join(folder, `${name}.log`);
  const origin = `http://${loopback}:${port}`;
  // A free metrics port per instance (a topology runs several), kept across restarts so that a
  // scraper finds it again; in env, so that a replacement started with this env takes it over.
  const env: Record<string, string> = {
    METRICS_PORT: String(await freePort()),
    ...options.env,
    PORT: String(port),
    HOST: loopback,
  };
  const metricsPort = /^[1-9][0-9]*$/.test(env['METRICS_PORT']!) ? Number(env['METRICS_PORT']) : undefined;
  let pid = 0;

  const start = async () => {
    pid = spawnLogged({
      command: process.execPath,
      args: [options.entry ?? builtServer],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: process.env['LANG'] ?? 'C.UTF-8', ...env },
      logFile,
      persistent: options.persistent === true,
      cwd: repoRoot,
    });
    try {
      await waitUntil(
        { what: `service ${name} on ${origin}`, timeoutMs: options.readyTimeoutMs ?? 30_000, pid, logFile },
        () => readyz(origin),
      );
    } catch (error) {
      // One that never got ready is not left running: the caller has no instance to stop.
      if (isAlive(pid)) await stopPid(pid, 'SIGTERM', 10_000);
      throw error;
    }
  };
  await start();

  const instance: ServiceInstance = {
    name,
    port,
    folder,
    logFile,
    origin,
    env,
    metricsPort,
    get pid() {
      return pid;
    },
    async stop(timeoutMs = 30_000) {
      if (isAlive(pid)) await stopPid(pid, 'SIGTERM', timeoutMs);
    },
    async kill() {
      signal(pid, 'SIGKILL');
      await waitForExit(pid, 10_000);
      untrack(pid);
    },
    async restart() {
      if (isAlive(pid))
        throw new Error(`service ${name} on port ${port} still runs (pid ${pid}); stop or kill it first`);
      await start();
    },
    async remove() {
      await instance.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
  return instance;
}
