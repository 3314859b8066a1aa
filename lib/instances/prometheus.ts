import { copyFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { stringify } from 'yaml';
import { minimumRetentionDays } from '../objectives/rules.js';
import { startReadyDaemon, type ReadyDaemon } from './readyDaemon.js';

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

export interface PrometheusServer extends ReadyDaemon {
  /** The alerts pending or firing now. */
  alerts(): Promise<PrometheusAlert[]>;
  /** An instant query's result vector. */
  query(expression: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
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

/** Writes prometheus.yml and the rule files into `folder`; answers the path of prometheus.yml. */
function writeConfiguration(folder: string, options: PrometheusOptions): string {
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
  return configFile;
}

export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const daemon = await startReadyDaemon({
    name: 'Prometheus',
    command: prometheusBin,
    prefix: 'prometheus',
    ...(options.parent === undefined ? {} : { parent: options.parent }),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
    flags: (folder, listenAddress) => [
      `--config.file=${writeConfiguration(folder, options)}`,
      `--storage.tsdb.path=${join(folder, 'data')}`,
      `--web.listen-address=${listenAddress}`,
      retentionFlag,
      '--log.level=warn',
    ],
  });
  await assertRetention(daemon.url).catch(async (error: unknown) => {
    await daemon.stop();
    throw error;
  });
  const { url } = daemon;
  return {
    ...daemon,
    alerts: async () => (await api<{ alerts: PrometheusAlert[] }>(`${url}/api/v1/alerts`)).alerts,
    query: async (expression) =>
      (
        await api<{ result: Awaited<ReturnType<PrometheusServer['query']>> }>(
          `${url}/api/v1/query?query=${encodeURIComponent(expression)}`,
        )
      ).result,
  };
}
