import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import { parse, stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { specPath } from '../../src/openapi/files.js';
import {
  builtServer,
  ensurePackages,
  startPrometheus,
  startTopology,
  waitUntil,
  type PrometheusOptions,
  type PrometheusServer,
  type Topology,
  type TopologyOptions,
} from '../../lib/instances/index.js';
import { objectivesOf } from '../../lib/objectives/objectives.js';
import { objectiveRuleGroups } from '../../lib/objectives/rules.js';
import { ruleSettingsOf } from '../../lib/objectives/settings.js';
import { repoRoot } from '../../lib/repoRoot.js';
import type { Pet } from '../helpers/pages.js';

/**
 * What the topology tests share: whether they can run here (and why not),
 * a topology that goes when the test ends, and a bounded load generator.
 */

let why: string | undefined | null = null;
const sessionPooling = process.env['TOPOLOGY_POOL_MODE'] === 'session';

/** undefined when the topology can run here (installing its Debian packages as root if missing), else why not. */
export function topologyUnavailableReason(): string | undefined {
  if (why !== null) return why;
  const missing = ensurePackages((line) => process.stderr.write(`# ${line}\n`));
  why =
    missing ??
    (existsSync(builtServer)
      ? undefined
      : `${builtServer} is missing: npm run test:system -- topology builds it first (npm run build)`);
  return why;
}

/**
 * The service settings the topology sets (and what each test needs), with a
 * value of the agreed form; a test that needs one the service does not know
 * yet is skipped with that reason.
 */
export const serviceSettings = {
  DATABASE_STATEMENTS: 'unnamed',
  DATABASE_DIRECT_URL: 'postgres://postgres@127.0.0.1:1/pets',
  DATABASE_READ_URL: 'postgres://postgres@127.0.0.1:1/pets',
  DRAIN_DELAY_MS: '4000',
} as const;

/** Why the service cannot take these settings (unknown to src/config/load.ts, or refused), or undefined. */
export function missingSettingsReason(names: Array<keyof typeof serviceSettings>): string | undefined {
  const env = {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:1/pets',
    ...Object.fromEntries(names.map((name) => [name, serviceSettings[name]])),
  };
  try {
    const config = loadConfig(env) as Record<string, unknown>;
    const unknown = names.filter((name) => !(name in config));
    return unknown.length > 0 ? `the service has no ${unknown.join(', ')} setting yet` : undefined;
  } catch (error) {
    return `the service refuses ${names.join(', ')}: ${(error as Error).message}`;
  }
}

/**
 * Test options that skip with the reason when the topology cannot run here,
 * or when the service lacks a setting the test relies on.
 */
export function topologyTestOptions(needs: Array<keyof typeof serviceSettings> = []): { skip: string | false } {
  // Session pooling (TOPOLOGY_POOL_MODE=session, to compare) works with named statements.
  const needed = sessionPooling ? needs.filter((name) => name !== 'DATABASE_STATEMENTS') : needs;
  const reason = topologyUnavailableReason() ?? missingSettingsReason(needed);
  return { skip: reason ? `topology test skipped: ${reason}` : false };
}

/** Past the kernel's 107-byte socket path limit on its own, before our nested folders. */
export const deepPathLength = 120;
/**
 * A folder at a deep path, as a CI workspace (/home/runner/work/<repo>/<repo>) makes one, under a new
 * temporary folder of its own (root), which the caller removes.
 */
export function deepFolder(): { root: string; path: string } {
  const root = mkdtempSync(join(tmpdir(), 'pets-deep-checkout-'));
  // Searchable by the postgres account, which runs PostgreSQL and pg_autoctl in folders below (mkdtemp gives 700).
  chmodSync(root, 0o755);
  let path = root;
  while (path.length < deepPathLength) path = join(path, 'workspace-folder');
  mkdirSync(path, { recursive: true });
  return { root, path };
}

/** The whole topology in a temporary folder, removed when the test ends; each step's start time in a comment. */
export async function startTestTopology(t: Test, options: TopologyOptions = {}): Promise<Topology> {
  const startedAt = Date.now();
  const topology = await startTopology({
    ...(sessionPooling ? { poolMode: 'session' as const } : {}),
    log: (line) => {
      t.comment(`topology +${Date.now() - startedAt} ms: ${line}`);
    },
    ...options,
    serviceEnv: { LOG_LEVEL: 'warn', ...options.serviceEnv },
  });
  t.comment(`topology up in ${Date.now() - startedAt} ms`);
  t.teardown(() => topology.remove());
  return topology;
}

export interface LoadOptions {
  baseUrl: string;
  apiKey: string;
  /** Concurrent clients. */
  workers: number;
  /** Share of requests that create a pet (the rest list or get). */
  writeShare: number;
  /** Runs until this resolves, or `maxRequests`, or `maxMs`, whichever comes first. */
  until: Promise<unknown>;
  maxRequests?: number;
  maxMs?: number;
  /** Prefix of the names of created pets, to tell this run's pets apart. */
  namePrefix?: string;
  /** Each create sends an Idempotency-Key of its own (the pet's name), recorded in `keyed`. */
  idempotencyKeys?: boolean;
  /** Counts into this (from newLoadResult), so a caller can wait on the load's progress while it runs. */
  into?: LoadResult;
}

/** An acknowledged create made with an Idempotency-Key: what was sent, and the pet it made. */
export interface KeyedCreate {
  key: string;
  body: string;
  id: number;
}

export interface LoadResult {
  requests: number;
  /** Count per HTTP status ("network" for a request that got no HTTP answer). */
  statuses: Record<string, number>;
  /** Up to 20 descriptions of failed requests. */
  failures: string[];
  /** Pets whose creation was acknowledged (201). */
  created: Pet[];
  /** With idempotencyKeys: every acknowledged create. */
  keyed: KeyedCreate[];
}

export function newLoadResult(): LoadResult {
  return { requests: 0, statuses: {}, failures: [], created: [], keyed: [] };
}

/** Resolves once the load counting into `progress` has had `more` outcomes (an answer or a failure) past those it had. */
export async function moreOutcomes(progress: LoadResult, more: number): Promise<void> {
  const outcomes = () => Object.values(progress.statuses).reduce((sum, count) => sum + count, 0);
  const target = outcomes() + more;
  await waitUntil({ what: `${more} more client outcomes`, timeoutMs: 60_000 }, async () =>
    outcomes() >= target ? true : undefined,
  );
}

/** Bounded client load through the balancer: creates, lists and gets, each answer counted. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = options.into ?? newLoadResult();
  const maxRequests = options.maxRequests ?? 100_000;
  const deadline = Date.now() + (options.maxMs ?? 120_000);
  let stop = false;
  const stopNow = () => (stop = true);
  void options.until.then(stopNow, stopNow);
  const auth = { authorization: `Bearer ${options.apiKey}` };
  const count = (status: string, failure?: string) => {
    result.statuses[status] = (result.statuses[status] ?? 0) + 1;
    if (failure && result.failures.length < 20) result.failures.push(failure);
  };

  const worker = async (index: number) => {
    for (let sequence = 0; !stop && result.requests < maxRequests && Date.now() < deadline; sequence += 1) {
      result.requests += 1;
      const choice = Math.random();
      const known =
        result.created.length > 0 ? result.created[Math.floor(Math.random() * result.created.length)] : undefined;
      let method = 'GET';
      let url = `${options.baseUrl}/pets?limit=20`;
      let body: string | undefined;
      let key: string | undefined;
      if (choice < options.writeShare) {
        method = 'POST';
        url = `${options.baseUrl}/pets`;
        const name = `${options.namePrefix ?? 'load'}-${index}-${sequence}`;
        body = JSON.stringify({ name, categoryId: 1 + (sequence % 5) });
        if (options.idempotencyKeys) key = name;
      } else if (known && choice < options.writeShare + (1 - options.writeShare) / 2) {
        url = `${options.baseUrl}/pets/${known.id}`;
      }
      try {
        const response = await fetch(url, {
          method,
          headers: body
            ? { ...auth, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }
            : auth,
          ...(body ? { body } : {}),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await response.text();
        const ok = response.status === (method === 'POST' ? 201 : 200);
        count(
          String(response.status),
          ok ? undefined : `${method} ${url.replace(options.baseUrl, '')}: ${response.status} ${text.slice(0, 200)}`,
        );
        if (ok && method === 'POST') {
          const pet = JSON.parse(text) as Pet;
          result.created.push(pet);
          if (key && body) result.keyed.push({ key, body, id: pet.id });
        }
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code;
        count(
          'network',
          `${method} ${url.replace(options.baseUrl, '')}: ${(error as Error).message}${cause ? ` (${cause})` : ''}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: options.workers }, (_, index) => worker(index)));
  return result;
}

/** "201: 812, 200: 3050" */
export function describeStatuses(statuses: Record<string, number>): string {
  return Object.entries(statuses)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');
}

/**
 * The objectives' windows in the drills, divided by this: 5 minutes become 5 s, 1 h one minute,
 * 6 h six minutes, 3 days 72 minutes. A drill lasts a minute or two, not hours; the burn rates
 * (14.4, 6, 1 times the budget) stay as they are.
 */
export const drillWindowScale = 60;

/**
 * A private Prometheus scraping every instance's metrics port each second, with the objectives'
 * rules generated from openapi.yaml at drillWindowScale and deploy/prometheus/alerts.yml as shipped.
 */
export async function startTestPrometheus(
  t: Test,
  topology: Topology,
  more: Pick<PrometheusOptions, 'alertmanagers' | 'scrapeConfigs'> = {},
): Promise<PrometheusServer> {
  const objectives = objectivesOf(parse(readFileSync(specPath, 'utf8')) as Parameters<typeof objectivesOf>[0]);
  const scaled = scaledRulesOf(topology);
  writeFileSync(
    scaled,
    stringify({ groups: objectiveRuleGroups(objectives, { ...ruleSettingsOf(process.env), scale: drillWindowScale }) }),
  );
  const prometheus = await startPrometheus({
    targets: topology.services.map((service) => `127.0.0.1:${service.metricsPort!}`),
    ruleFiles: [scaled, join(repoRoot, 'deploy/prometheus/alerts.yml')],
    parent: topology.folder,
    intervalSeconds: 1,
    ...more,
  });
  t.teardown(() => prometheus.remove());
  return prometheus;
}

/** The scaled rules file startTestPrometheus writes in the topology's folder. */
const scaledRulesOf = (topology: Topology) => join(topology.folder, `objectives-scaled-${drillWindowScale}.yml`);

/** An objective alert of the drill's scaled rules: its condition (the expression, without `for`) and its hold in ms. */
export function scaledAlertRule(topology: Topology, alert: string, operation: string): { expr: string; forMs: number } {
  const file = parse(readFileSync(scaledRulesOf(topology), 'utf8')) as {
    groups: Array<{ rules: Array<{ alert?: string; expr: string; for?: string; labels?: Record<string, string> }> }>;
  };
  const rule = file.groups
    .flatMap((group) => group.rules)
    .find((candidate) => candidate.alert === alert && candidate.labels?.['operation'] === operation);
  if (!rule) throw new Error(`no ${alert} ${operation} in ${scaledRulesOf(topology)}`);
  const held = /^(\d+)(s|m)$/.exec(rule.for ?? '0s');
  if (!held) throw new Error(`${alert}: unexpected for ${rule.for}`);
  return { expr: rule.expr, forMs: Number(held[1]) * (held[2] === 'm' ? 60_000 : 1000) };
}

/**
 * The runs (first and last second, ms since the epoch) in which expression had a result, evaluated each
 * second from `from` to `to` over what Prometheus stored: for an alert's condition, when it held.
 */
export async function heldRuns(
  prometheus: PrometheusServer,
  expression: string,
  from: number,
  to: number,
): Promise<Array<{ from: number; to: number }>> {
  const url =
    `${prometheus.url}/api/v1/query_range?query=${encodeURIComponent(expression)}` +
    `&start=${Math.floor(from / 1000)}&end=${Math.ceil(to / 1000)}&step=1`;
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const body = (await response.json()) as {
    status: string;
    error?: string;
    data: { result: Array<{ values: Array<[number, string]> }> };
  };
  if (body.status !== 'success') throw new Error(`query_range: ${body.error ?? response.status}`);
  const seconds = [...new Set(body.data.result.flatMap((series) => series.values.map(([at]) => at)))].sort(
    (a, b) => a - b,
  );
  const runs: Array<{ from: number; to: number }> = [];
  for (const second of seconds) {
    const last = runs.at(-1);
    if (last && second * 1000 - last.to <= 1000) last.to = second * 1000;
    else runs.push({ from: second * 1000, to: second * 1000 });
  }
  return runs;
}

/**
 * The spans of availability alerts only. The drills assert on these; a latency alert is reported,
 * never asserted: latency on a shared 2-core machine is noise (timing belongs in npm run bench).
 */
export const availabilitySpans = (spans: AlertSpan[]) =>
  spans.filter((span) => span.key.startsWith('PetsAvailability'));

/** "PetsLatencyFastBurn createPet: fired at +13747 ms, resolved at +21927 ms" for each span. */
export function describeSpans(spans: AlertSpan[], since: number): string {
  return spans
    .map(
      (span) =>
        `${span.key}: fired at +${span.firingAt - since} ms` +
        (span.resolvedAt === undefined ? '' : `, resolved at +${span.resolvedAt - since} ms`),
    )
    .join('; ');
}

/** One alert's time line, in ms since the watch began: when it was first seen firing, and when it went. */
export interface AlertSpan {
  key: string;
  firingAt: number;
  resolvedAt?: number | undefined;
}

export interface AlertWatch {
  /** The objective alerts (those with an slo label) seen firing, by "alertname operation". */
  spans(): AlertSpan[];
  /** Resolves when `key` has fired and then resolved, or after timeoutMs (check spans()). */
  waitForResolved(key: string, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
  readonly startedAt: number;
}

/** Asks Prometheus for its alerts every 500 ms, and keeps when each objective alert fired and resolved. */
export function watchObjectiveAlerts(prometheus: PrometheusServer): AlertWatch {
  const startedAt = Date.now();
  const spans = new Map<string, AlertSpan>();
  let running = true;
  const polling = (async () => {
    while (running) {
      const now = Date.now() - startedAt;
      const firing = new Set(
        (await prometheus.alerts().catch(() => []))
          .filter((alert) => alert.state === 'firing' && alert.labels['slo'] !== undefined)
          .map((alert) => `${alert.labels['alertname']} ${alert.labels['operation']}`),
      );
      for (const key of firing) {
        const span = spans.get(key);
        if (span === undefined) spans.set(key, { key, firingAt: now });
        else if (span.resolvedAt !== undefined) span.resolvedAt = undefined;
      }
      for (const span of spans.values())
        if (!firing.has(span.key) && span.resolvedAt === undefined) span.resolvedAt = now;
      await sleep(500);
    }
  })();
  return {
    startedAt,
    spans: () => [...spans.values()].map((span) => ({ ...span })),
    async waitForResolved(key, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline && spans.get(key)?.resolvedAt === undefined) await sleep(250);
    },
    async stop() {
      running = false;
      await polling;
    },
  };
}
