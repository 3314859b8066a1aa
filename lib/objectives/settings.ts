import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../repoRoot.js';
import { readProbeInterval, type ProbedRead } from './probes.js';

/**
 * What the generated rules take from where they are deployed, set when they
 * are generated (`npm run generate`, environment variables):
 * - RUNBOOK_BASE_URL: the absolute URL of docs/alerts.md as the on-call
 *   engineer opens it; every runbook_url is it plus the alert's anchor.
 *   Default: the `repository` URL of package.json, file docs/alerts.md on main.
 * - PROMETHEUS_JOB: the job_name Prometheus scrapes the service under; every
 *   rule, the dashboard and the docs' example select by it, so that another
 *   copy (staging, under its own job) pages nobody. Default pet-store-service.
 * - PROMETHEUS_SELECTOR: matchers every rule adds to the job's, when one job
 *   name is shared (`namespace="prod"`, the monitoring-mixins' selector).
 *   Default none.
 */
export interface RuleSettings {
  runbookBase: string;
  job: string;
  /** Extra matchers, comma-separated, or '' for none. */
  selector?: string;
}

export const defaultJob = 'pet-store-service';

/** The matchers of the service's own series: its job, and the extra selector when one is set. */
export function serviceMatchers(settings: Pick<RuleSettings, 'job' | 'selector'>): string {
  return settings.selector ? `job="${settings.job}",${settings.selector}` : `job="${settings.job}"`;
}

/** The matchers of the probes of /healthz: the probe's job, and the extra selector. */
export function probeMatchers(settings: Pick<RuleSettings, 'job' | 'selector'>): string {
  const job = `job="${probeJobOf(settings.job)}"`;
  return settings.selector ? `${job},${settings.selector}` : job;
}

/** The matchers of the probes of the read operations (probes.ts): the reads' job, and the extra selector. */
export function readProbeMatchers(settings: Pick<RuleSettings, 'job' | 'selector'>): string {
  const job = `job="${readProbeJobOf(settings.job)}"`;
  return settings.selector ? `${job},${settings.selector}` : job;
}

/** One matcher, label op "value", as PromQL writes them: a selector is a comma-separated list of them. */
const matcher = /\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\\n]|\\.)*"\s*/;
const selectorPattern = new RegExp(`^${matcher.source}(,${matcher.source})*$`);

/**
 * The job the blackbox exporter's probes of /healthz are scraped under
 * (deploy/prometheus/prometheus.yml): the alerts tell "down" from "answers
 * but cannot be scraped" by it.
 */
export const probeJobOf = (job: string): string => `${job}-healthz`;

/** The job the probes of the read operations are scraped under (probes.ts): each probe labelled by its operation. */
export const readProbeJobOf = (job: string): string => `${job}-reads`;

/** https://host/owner/name from package.json's repository (a string or { url }), git+ and .git dropped. */
export function repositoryUrl(packageJson: { repository?: string | { url?: string } }): string {
  const field = packageJson.repository;
  const url = typeof field === 'string' ? field : field?.url;
  if (!url) throw new Error('package.json has no repository URL: set one, or RUNBOOK_BASE_URL');
  return url.replace(/^git\+/, '').replace(/\.git$/, '');
}

function absolute(url: string, name: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${name} must be an absolute http(s) URL, not ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new Error(`${name} must be an absolute http(s) URL, not ${JSON.stringify(url)}`);
  return url;
}

/** The settings from the environment, defaults from package.json. */
export function ruleSettingsOf(env: NodeJS.ProcessEnv): RuleSettings {
  const packageJson = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Parameters<
    typeof repositoryUrl
  >[0];
  const base = env['RUNBOOK_BASE_URL'] || `${repositoryUrl(packageJson)}/blob/main/docs/alerts.md`;
  const job = env['PROMETHEUS_JOB'] || defaultJob;
  if (!/^[^"\\\n]+$/.test(job))
    throw new Error(`PROMETHEUS_JOB must be a plain label value, not ${JSON.stringify(job)}`);
  const selector = env['PROMETHEUS_SELECTOR'] ?? '';
  if (selector !== '' && (!selectorPattern.test(selector) || /(^|,)\s*job\s*[=!]/.test(selector)))
    throw new Error(
      `PROMETHEUS_SELECTOR must be PromQL matchers (namespace="prod",cluster=~"eu.*") without job, not ${JSON.stringify(selector)}`,
    );
  return { runbookBase: absolute(base, 'RUNBOOK_BASE_URL'), job, ...(selector ? { selector: selector.trim() } : {}) };
}

/** Where the shipped scrape configuration (deploy/prometheus/prometheus.yml) looks; an example an operator edits. */
const exampleHosts = ['pets-1', 'pets-2', 'pets-3'];

/** Where docs/operations.md's example scrapes: one instance, as an operator starts. */
const docsHost = '10.0.0.5';

/**
 * The smallest configuration the rules work with, as docs/operations.md
 * shows it: the service and its probe under the job names the rules watch.
 */
export function docsPrometheusExample(settings: RuleSettings, apiPort: number, metricsPort: number) {
  return {
    scrape_configs: scrapeConfigs(settings, [docsHost], apiPort, metricsPort),
    rule_files: ['deploy/prometheus/objectives.yml', 'deploy/prometheus/alerts.yml'],
  };
}

/** The blackbox exporter's target labels: the probed URL as the target and instance, the exporter as the address. */
const throughBlackbox = () => [
  { source_labels: ['__address__'], target_label: '__param_target' },
  { source_labels: ['__param_target'], target_label: 'instance' },
  { target_label: '__address__', replacement: 'blackbox-exporter:9115' },
];

/** The scrape of the probes of the read operations: one target per instance and read, its module the operation's. */
function readProbeScrape(settings: RuleSettings, hosts: string[], apiPort: number, reads: ProbedRead[]) {
  return {
    job_name: readProbeJobOf(settings.job),
    scrape_interval: readProbeInterval,
    metrics_path: '/probe',
    static_configs: reads.map((read) => ({
      targets: hosts.map((host) => `http://${host}:${apiPort}${read.path}`),
      labels: { operation: read.operation },
    })),
    relabel_configs: [{ source_labels: ['operation'], target_label: '__param_module' }, ...throughBlackbox()],
  };
}

function scrapeConfigs(settings: RuleSettings, hosts: string[], apiPort: number, metricsPort: number) {
  return [
    {
      job_name: settings.job,
      static_configs: [{ targets: hosts.map((host) => `${host}:${metricsPort}`) }],
    },
    {
      job_name: probeJobOf(settings.job),
      metrics_path: '/probe',
      params: { module: ['healthz'] },
      static_configs: [{ targets: hosts.map((host) => `http://${host}:${apiPort}/healthz`) }],
      relabel_configs: throughBlackbox(),
    },
  ];
}

/**
 * The Prometheus configuration shipped beside the rules: the service's
 * metrics listeners (METRICS_PORT, 9464), the blackbox exporter's probe of
 * each instance's /healthz (deploy/blackbox/blackbox.yml, module healthz,
 * job probeJobOf) and of its read operations (job readProbeJobOf), the
 * rules and Alertmanager (deploy/alertmanager/).
 */
export function prometheusConfig(settings: RuleSettings, apiPort: number, metricsPort: number, reads: ProbedRead[]) {
  return {
    global: { scrape_interval: '15s', evaluation_interval: '15s' },
    rule_files: ['objectives.yml', 'alerts.yml'],
    alerting: { alertmanagers: [{ static_configs: [{ targets: ['alertmanager:9093'] }] }] },
    scrape_configs: [
      ...scrapeConfigs(settings, exampleHosts, apiPort, metricsPort),
      ...(reads.length > 0 ? [readProbeScrape(settings, exampleHosts, apiPort, reads)] : []),
    ],
  };
}
