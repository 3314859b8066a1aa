import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { stringify } from 'yaml';
import { minimumRetentionDays } from '../objectives/rules.js';
import { freePort, loopback } from './network.js';
import { isAlive, ownedFolder, spawnLogged, stopPid, waitUntil } from './processes.js';

/**
 * A private Prometheus on 127.0.0.1 and a free port, with its data in its
 * own folder: it scrapes the given metrics addresses and evaluates the given
 * rule files (copied in), at a short interval for drills. Stopped by its pid.
 */

export const prometheusBin = process.env['PROMETHEUS_BIN'] ?? 'prometheus';
export const promtoolBin = process.env['PROMTOOL_BIN'] ?? 'promtool';

export interface PrometheusOptions {
  /** host:port of each metrics listener to scrape. */
  targets: string[];
  /** The job label of the scraped series. */
  job?: string;
  ruleFiles: string[];
  /** How often it scrapes and evaluates the rules; 1s by default (a drill). */
  intervalSeconds?: number;
  parent?: string;
  port?: number;
  readyTimeoutMs?: number;
  /** host:port of each Alertmanager the alerts are sent to. */
  alertmanagers?: string[];
  /** More scrape configurations, as prometheus.yml spells them (the blackbox probe's job). */
  scrapeConfigs?: Array<Record<string, unknown>>;
}

/** One alert as GET /api/v1/alerts lists it. */
export interface PrometheusAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
  value: string;
}

export interface PrometheusServer {
  readonly port: number;
  readonly folder: string;
  readonly logFile: string;
  readonly pid: number;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** The alerts pending or firing now. */
  alerts(): Promise<PrometheusAlert[]>;
  /** An instant query's result vector. */
  query(expression: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  stop(): Promise<void>;
  remove(): Promise<void>;
}

async function api<T>(url: string): Promise<T> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  const body = (await response.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${url}: ${body.error ?? response.status}`);
  return body.data;
}

/**
 * The retention flag: as long as the objectives' 30-day window needs
 * (docs/alerts.md), so that a drill's Prometheus runs as production's must.
 */
export const retentionFlag = `--storage.tsdb.retention.time=${minimumRetentionDays}d`;

/** Days in a Prometheus duration such as 35d, 840h or 5w (its largest unit first, as it reports them). */
export function durationDays(text: string): number {
  const units: Record<string, number> = { y: 365, w: 7, d: 1, h: 1 / 24, m: 1 / 1440, s: 1 / 86400, ms: 1 / 86400000 };
  let days = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|y|w|d|h|m|s)/g)) days += Number(amount) * units[unit!]!;
  return days;
}

/** Throws unless the running Prometheus keeps data as long as the objectives need. */
async function assertRetention(url: string): Promise<void> {
  const flags = await api<Record<string, string>>(`${url}/api/v1/status/flags`);
  const retention = flags['storage.tsdb.retention.time'] ?? '';
  if (!(durationDays(retention) >= minimumRetentionDays))
    throw new Error(`Prometheus keeps ${retention || 'its default 15d'}: the objectives need ${minimumRetentionDays}d`);
}

export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const folder = ownedFolder('prometheus-', undefined, options.parent);
  const port = options.port ?? (await freePort());
  const logFile = join(folder, 'prometheus.log');
  const configFile = join(folder, 'prometheus.yml');
  const interval = `${options.intervalSeconds ?? 1}s`;
  const rules = options.ruleFiles.map((file, index) => {
    const copy = `${index}-${basename(file)}`;
    copyFileSync(file, join(folder, copy));
    return copy;
  });
  writeFileSync(
    configFile,
    stringify({
      global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
      rule_files: rules,
      ...(options.alertmanagers
        ? { alerting: { alertmanagers: [{ static_configs: [{ targets: options.alertmanagers }] }] } }
        : {}),
      scrape_configs: [
        { job_name: options.job ?? 'pet-store-service', static_configs: [{ targets: options.targets }] },
        ...(options.scrapeConfigs ?? []),
      ],
    }),
  );
  const pid = spawnLogged({
    command: prometheusBin,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(folder, 'data')}`,
      `--web.listen-address=${loopback}:${port}`,
      retentionFlag,
      '--log.level=warn',
    ],
    logFile,
    cwd: folder,
  });
  const url = `http://${loopback}:${port}`;
  await waitUntil(
    { what: `Prometheus on ${loopback}:${port}`, timeoutMs: options.readyTimeoutMs ?? 30_000, pid, logFile },
    async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined),
  );
  await assertRetention(url).catch(async (error: unknown) => {
    await stopPid(pid, 'SIGTERM', 15_000);
    throw error;
  });
  const server: PrometheusServer = {
    port,
    folder,
    logFile,
    pid,
    url,
    alerts: async () => (await api<{ alerts: PrometheusAlert[] }>(`${url}/api/v1/alerts`)).alerts,
    query: async (expression) =>
      (
        await api<{ result: Awaited<ReturnType<PrometheusServer['query']>> }>(
          `${url}/api/v1/query?query=${encodeURIComponent(expression)}`,
        )
      ).result,
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
