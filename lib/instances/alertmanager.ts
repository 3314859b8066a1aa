import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startReadyDaemon, type ReadyDaemon } from './readyDaemon.js';

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

export interface AlertmanagerServer extends ReadyDaemon {
  /** The alerts it holds now, inhibited ones included. */
  alerts(): Promise<AlertmanagerAlert[]>;
  /** Posts alerts as Prometheus would (POST /api/v2/alerts). */
  post(alerts: Array<{ labels: Record<string, string>; annotations?: Record<string, string> }>): Promise<void>;
}

export async function startAlertmanager(options: AlertmanagerOptions): Promise<AlertmanagerServer> {
  const daemon = await startReadyDaemon({
    name: 'Alertmanager',
    command: alertmanagerBin,
    prefix: 'alertmanager',
    ...(options.parent === undefined ? {} : { parent: options.parent }),
    ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
    flags: (folder, listenAddress) => {
      const configFile = join(folder, 'alertmanager.yml');
      writeFileSync(configFile, options.config);
      return [
        `--config.file=${configFile}`,
        `--storage.path=${join(folder, 'data')}`,
        `--web.listen-address=${listenAddress}`,
        // One Alertmanager: no gossip port (its default, 0.0.0.0:9094, would be shared with other runs).
        '--cluster.listen-address=',
        '--log.level=warn',
      ];
    },
  });
  const { url } = daemon;
  return {
    ...daemon,
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
  };
}
