import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, loopback } from './network.js';
import { isAlive, ownedFolder, spawnLogged, stopPid, waitUntil } from './processes.js';

/**
 * A private blackbox exporter on 127.0.0.1 and a free port with the given
 * configuration file (deploy/blackbox/blackbox.yml): Prometheus asks it to
 * probe a target with GET /probe?module=...&target=.... Stopped by its pid.
 */

/** Debian's prometheus-blackbox-exporter installs it under this name. */
export const blackboxBin = process.env['BLACKBOX_EXPORTER_BIN'] ?? 'prometheus-blackbox-exporter';

export interface BlackboxServer {
  readonly port: number;
  readonly pid: number;
  /** 127.0.0.1:<port>, as a scrape target. */
  readonly address: string;
  stop(): Promise<void>;
  remove(): Promise<void>;
}

export async function startBlackboxExporter(options: { configFile: string; parent?: string }): Promise<BlackboxServer> {
  const folder = ownedFolder('blackbox-', undefined, options.parent);
  const port = await freePort();
  const logFile = join(folder, 'blackbox.log');
  const configFile = join(folder, 'blackbox.yml');
  copyFileSync(options.configFile, configFile);
  const pid = spawnLogged({
    command: blackboxBin,
    args: [`--config.file=${configFile}`, `--web.listen-address=${loopback}:${port}`, '--log.level=warn'],
    logFile,
    cwd: folder,
  });
  const address = `${loopback}:${port}`;
  await waitUntil({ what: `the blackbox exporter on ${address}`, timeoutMs: 30_000, pid, logFile }, async () =>
    (await fetch(`http://${address}/-/ready`)).ok ? true : undefined,
  );
  const server: BlackboxServer = {
    port,
    pid,
    address,
    async stop() {
      if (isAlive(pid)) await stopPid(pid, 'SIGTERM', 15_000);
    },
    async remove() {
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
  return server;
}
