import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, loopback } from './network.js';
import { isAlive, ownedFolder, spawnLogged, stopPid, waitUntil } from './processes.js';

/**
 * A private Alertmanager on 127.0.0.1 and a free port, with its own data
 * folder and no cluster peer port, running the configuration text given
 * (deploy/alertmanager/alertmanager.yml with its receivers pointed at a
 * recorder, in the drills). Stopped by its pid.
 */

/** Debian's prometheus-alertmanager installs the daemon under this name; amtool beside it. */
export const alertmanagerBin = process.env['ALERTMANAGER_BIN'] ?? 'prometheus-alertmanager';
export const amtoolBin = process.env['AMTOOL_BIN'] ?? 'amtool';

export interface AlertmanagerOptions {
  /** The configuration, as YAML text. */
  config: string;
  parent?: string;
  readyTimeoutMs?: number;
}

/** One alert as GET /api/v2/alerts lists it. */
export interface AlertmanagerAlert {
  labels: Record<string, string>;
  status: { state: 'active' | 'suppressed' | 'unprocessed'; inhibitedBy: string[]; silencedBy: string[] };
}

export interface AlertmanagerServer {
  readonly port: number;
  readonly pid: number;
  readonly logFile: string;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** The alerts it holds now, inhibited ones included. */
  alerts(): Promise<AlertmanagerAlert[]>;
  /** Posts alerts as Prometheus would (POST /api/v2/alerts). */
  post(alerts: Array<{ labels: Record<string, string>; annotations?: Record<string, string> }>): Promise<void>;
  stop(): Promise<void>;
  remove(): Promise<void>;
}

export async function startAlertmanager(options: AlertmanagerOptions): Promise<AlertmanagerServer> {
  const folder = ownedFolder('alertmanager-', undefined, options.parent);
  const port = await freePort();
  const logFile = join(folder, 'alertmanager.log');
  const configFile = join(folder, 'alertmanager.yml');
  writeFileSync(configFile, options.config);
  const pid = spawnLogged({
    command: alertmanagerBin,
    args: [
      `--config.file=${configFile}`,
      `--storage.path=${join(folder, 'data')}`,
      `--web.listen-address=${loopback}:${port}`,
      // One Alertmanager: no gossip port (its default, 0.0.0.0:9094, would be shared with other runs).
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
    logFile,
    cwd: folder,
  });
  const url = `http://${loopback}:${port}`;
  await waitUntil(
    { what: `Alertmanager on ${loopback}:${port}`, timeoutMs: options.readyTimeoutMs ?? 30_000, pid, logFile },
    async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined),
  );
  const server: AlertmanagerServer = {
    port,
    pid,
    logFile,
    url,
    alerts: async () => {
      const response = await fetch(`${url}/api/v2/alerts`, { signal: AbortSignal.timeout(5_000) });
      if (!response.ok) throw new Error(`GET ${url}/api/v2/alerts: ${response.status}`);
      return (await response.json()) as AlertmanagerAlert[];
    },
    async post(alerts) {
      const response = await fetch(`${url}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(alerts),
        signal: AbortSignal.timeout(5_000),
      });
      if (!response.ok) throw new Error(`POST ${url}/api/v2/alerts: ${response.status} ${await response.text()}`);
    },
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
