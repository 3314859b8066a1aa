import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, loopback } from './network.js';
import { isAlive, ownedFolder, spawnLogged, stopPid, waitUntil } from './processes.js';

/**
 * A private daemon of the Prometheus family (Prometheus, Alertmanager, the
 * blackbox exporter) on 127.0.0.1 and a free port, in a folder of its own,
 * ready when GET /-/ready answers 200. Stopped by its pid, never by name.
 */

export interface ReadyDaemonOptions {
  /** What it is, for the wait's message: `Prometheus`. */
  name: string;
  /** Its binary. */
  command: string;
  /** Its folder's name starts with this, and its log is `<prefix>.log` in it. */
  prefix: string;
  parent?: string;
  port?: number;
  readyTimeoutMs?: number;
  /** Writes its files into `folder` and answers its flags, the listen address given. */
  flags(folder: string, listenAddress: string): string[];
}

export interface ReadyDaemon {
  readonly folder: string;
  readonly port: number;
  readonly pid: number;
  readonly logFile: string;
  /** 127.0.0.1:<port>, as a scrape target or an Alertmanager address. */
  readonly address: string;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  stop(): Promise<void>;
  /** Stops it and deletes its folder. */
  remove(): Promise<void>;
}

/** How long one of them may take to stop on SIGTERM (it flushes its data) before SIGKILL. */
const stopTimeoutMs = 15_000;
/** How long one of them may take to answer /-/ready on a busy two-core machine. */
const defaultReadyTimeoutMs = 30_000;

export async function startReadyDaemon(options: ReadyDaemonOptions): Promise<ReadyDaemon> {
  const folder = ownedFolder(`${options.prefix}-`, undefined, options.parent);
  const port = options.port ?? (await freePort());
  const address = `${loopback}:${port}`;
  const logFile = join(folder, `${options.prefix}.log`);
  const pid = spawnLogged({
    command: options.command,
    args: options.flags(folder, address),
    logFile,
    cwd: folder,
  });
  const url = `http://${address}`;
  const stop = async () => {
    if (isAlive(pid)) await stopPid(pid, 'SIGTERM', stopTimeoutMs);
  };
  await waitUntil(
    { what: `${options.name} on ${address}`, timeoutMs: options.readyTimeoutMs ?? defaultReadyTimeoutMs, pid, logFile },
    async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined),
  ).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return {
    folder,
    port,
    pid,
    logFile,
    address,
    url,
    stop,
    async remove() {
      await stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
