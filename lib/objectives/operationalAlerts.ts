import { configSchema } from '../../src/config/schema.js';
import { shedReasons } from '../../src/http/arrival/loadShedding.js';
import { httpLimits } from '../../src/http/limits.js';
import { runbookUrl, type AlertingRule, type RecordingRule, type RuleGroup } from './rules.js';
import { probeMatchers, readProbeMatchers, serviceMatchers, type RuleSettings } from './settings.js';

/**
 * The alerts that are not objectives (deploy/prometheus/alerts.yml): the
 * service gone or unscrapable, too many instances not serving (a page), one
 * instance down or not ready (a ticket), the pool saturated, load shed. They
 * are generated, not hand-written, so that their job, runbook links and the
 * load-shedding facts (limit, reasons) come from one place each: the
 * generation settings and the code's own constants.
 */

/** How long the request metric may be missing, and how long the absence must last, before the page. */
export const absence = { window: '5m', for: '3m' } as const;

function withRunbook(
  settings: RuleSettings,
  rule: Omit<AlertingRule, 'annotations'> & { summary: string; description: string },
) {
  const { summary, description, ...rest } = rule;
  return { ...rest, annotations: { summary, description, runbook_url: runbookUrl(settings.runbookBase, rule.alert) } };
}

/** The setting the code sheds by, and its default (src/config/schema.ts). */
const sheddingSetting = 'LOAD_SHED_EVENT_LOOP_DELAY_MS';
const sheddingDefaultMs: number = configSchema.properties[sheddingSetting].default;

/** The load-shedding limit in words, from the setting and the constants the code sheds by. */
export function sheddingLimitText(): string {
  const { sampleIntervalMs } = httpLimits.loadShedding;
  return (
    `mean event-loop delay is over ${sheddingSetting} (default ${sheddingDefaultMs} ms; 0 turns shedding off), ` +
    `sampled every ${sampleIntervalMs} ms`
  );
}

/** The load-shedding facts the docs state (docs/alerts.md, docs/operations.md), from the code's constants. */
export function loadSheddingFacts(): string {
  const { retryAfterSeconds } = httpLimits.loadShedding;
  return (
    `Shedding starts when the ${sheddingLimitText()}; the first two samples after start are ignored. Shed requests get 503 \`service_unavailable\` with ` +
    `\`Retry-After: ${retryAfterSeconds}\` and are counted in \`pets_load_shed_requests_total\` by \`reason\`: ` +
    `${shedReasons.map((reason) => `\`${reason}\``).join(', ')}.`
  );
}

/** The share of a job's instances not serving (down, or not ready for no planned reason) that pages. */
export const notServingPageShare = 0.5;

/** How long one instance may be down or not ready before it is a ticket. */
export const instanceTicketFor = '15m';

/** The recorded share of the job's instances that are down or not ready, draining and shedding aside. */
export const notServingShare = 'job:pets_instances_not_serving:ratio';

/**
 * The host of a target, as a `host` label: a scrape's instance is host:port
 * (the metrics listener), a probe's the URL of /healthz on the API's port, so
 * the host is what a scrape and a probe of one instance share.
 */
const withHost = (expr: string, pattern: string) => `label_replace(${expr}, "host", "$1", "instance", "${pattern}")`;
const scrapeHost = (expr: string) => withHost(expr, '([^:]+)(:[0-9]+)?');
const probeHost = (expr: string) => withHost(expr, 'https?://([^:/]+).*');

/**
 * The instances not serving, one series each: unscraped and no probe of its
 * host succeeds (a failed scrape with a healthy /healthz is monitoring's
 * trouble, PetsUnscrapable's), scraped but its probe fails (the API port
 * gone while the metrics listener answers), or not ready for no planned
 * reason. Without probes at all, a failed scrape counts as not serving.
 */
function notServingInstances(job: string, probe: string, notReady: string): string {
  return [
    `${scrapeHost(`up{${job}} == 0`)}\n  unless on (host)\n  ${probeHost(`${probe} == 1`)}`,
    `${scrapeHost(`up{${job}} == 1`)}\n  and on (host)\n  ${probeHost(`${probe} == 0`)}`,
    notReady,
  ]
    .map((part) => `(\n  ${part}\n)`)
    .join('\nor on (job, instance)\n');
}

/**
 * A release that refuses every caller (all 401, or any 4xx but 429) is an
 * outage the objectives cannot see: 4xx are the client's doing and counted
 * in neither ratio. What tells it from a client's mistake is what happened
 * to everyone else: the operation's good answers (2xx, 3xx) fell to a tenth
 * of their rate over the last 6 hours, while refusals make most of its
 * answers. One client with a bad key adds refusals but leaves the others'
 * good answers be; a 429 flood is rate limiting doing its job (not counted);
 * a quiet night lowers the good answers but brings no refusals.
 */
export const refusals = {
  share: 0.5,
  goodShareOfBaseline: 0.1,
  window: '5m',
  baseline: '6h',
  minimum: 10,
  for: '5m',
} as const;

function refusedExpr(job: string): string {
  const rate = (status: string, range: string, fn = 'rate') =>
    `sum by (job, operation) (${fn}(http_server_request_duration_seconds_count{${job},${status}}[${range}]))`;
  const refused = 'status_code=~"4..",status_code!="429"';
  const good = 'status_code=~"[23].."';
  const all = 'status_code=~".+"';
  return [
    `${rate(refused, refusals.window)}\n  / ${rate(all, refusals.window)}\n  > ${refusals.share}`,
    `${rate(good, refusals.window)}\n  < ${refusals.goodShareOfBaseline} * ${rate(good, refusals.baseline)}`,
    `${rate(refused, refusals.window, 'increase')} >= ${refusals.minimum}`,
  ]
    .map((part) => `(\n  ${part}\n)`)
    .join('\nand\n');
}

/** How long every probe of a read operation must fail, /healthz answering, before the page. */
export const readProbeFor = '5m';

export function operationalRuleGroup(settings: RuleSettings): RuleGroup {
  const job = serviceMatchers(settings);
  const probe = `probe_success{${probeMatchers(settings)}}`;
  // Nothing scraped: every target down, the job gone from discovery, or no request metric.
  const unscraped = [
    `max by (job) (up{${job}}) == 0`,
    `absent(up{${job}})`,
    `absent_over_time(http_server_request_duration_seconds_count{${job}}[${absence.window}])`,
  ].join('\n  or\n  ');
  // Not ready for no planned reason: a drain answers 503 on /readyz on purpose, and so does shedding
  // (its own ticket, PetsLoadShedding).
  const notReady =
    `pets_ready{${job}} == 0\n  unless on (job, instance)\n  ` +
    `(pets_draining{${job}} > 0 or pets_load_shedding{${job}} > 0)`;
  const instances = `count by (job) (up{${job}})`;
  const rules: Array<RecordingRule | AlertingRule> = [
    {
      record: notServingShare,
      expr:
        `(\n  count by (job) (\n${notServingInstances(job, probe, notReady)}\n  )\n  or on (job) 0 * ${instances}\n)\n` +
        `/ on (job)\n${instances}`,
      labels: {},
    },
    withRunbook(settings, {
      alert: 'PetsDown',
      // With the process gone there is no ratio for a burn-rate alert to compare, so absence pages on its
      // own; unless the probe of /healthz still gets answers (PetsUnscrapable).
      expr: `(\n  ${unscraped}\n)\nunless on ()\n  max(${probe}) == 1`,
      for: absence.for,
      labels: { severity: 'page' },
      summary: 'The pet store service is down: no target of its job answers scrapes or probes',
      description:
        `No target of job {{ $labels.job }} has answered a scrape, or none has exported ` +
        `http_server_request_duration_seconds for ${absence.window}, for ${absence.for}, and no probe of /healthz ` +
        `succeeds: the service is down.`,
    }),
    withRunbook(settings, {
      alert: 'PetsUnscrapable',
      expr: `(\n  ${unscraped}\n)\nand on ()\n  max(${probe}) == 1`,
      for: absence.for,
      labels: { severity: 'ticket' },
      summary: 'The pet store service answers its probe but cannot be scraped: its alerts are blind',
      description:
        `No target of job {{ $labels.job }} has answered a scrape for ${absence.for}, yet the probe of /healthz ` +
        `succeeds: the service serves, its metrics are not read (metrics listener, network, scrape configuration).`,
    }),
    withRunbook(settings, {
      alert: 'PetsReadProbeFailing',
      // Every instance's probe of the operation fails, and some /healthz answers: with none answering it is
      // PetsDown's outage, paged once. The probes' job is not the service's: the alert takes the service's, so
      // that it joins the job's one page and PetsDown inhibits it.
      expr:
        `max by (operation) (probe_success{${readProbeMatchers(settings)}}) == 0\n` + `and on ()\n  max(${probe}) == 1`,
      for: readProbeFor,
      labels: { severity: 'page', job: settings.job },
      summary: '{{ $labels.operation }} fails its synthetic request on every instance while /healthz answers',
      description:
        `Every probe of {{ $labels.operation }} (the blackbox exporter's request with the prober's key) has failed ` +
        `for ${readProbeFor} on every instance, while the probe of /healthz succeeds: the operation is down for ` +
        `every caller, however few.`,
    }),
    withRunbook(settings, {
      alert: 'PetsNotReady',
      // The recorded share keeps the job alone (count by job): select it by the job.
      expr: `${notServingShare}{job="${settings.job}"} >= ${notServingPageShare}`,
      for: '3m',
      labels: { severity: 'page' },
      summary: `Half or more of the service's instances are down or not ready`,
      description:
        `At least ${notServingPageShare * 100} % of the instances of job {{ $labels.job }} have been down or ` +
        `answering 503 on /readyz (not draining, not shedding) for 3 minutes: the others may not carry the load.`,
    }),
    withRunbook(settings, {
      alert: 'PetsCallersRefused',
      expr: refusedExpr(job),
      for: refusals.for,
      labels: { severity: 'page' },
      summary: '{{ $labels.operation }} refuses its callers: most answers are 4xx and the good ones are gone',
      description:
        `More than ${refusals.share * 100} % of {{ $labels.operation }}'s answers over ${refusals.window} are 4xx ` +
        `(429 aside), and its 2xx and 3xx fell below ${refusals.goodShareOfBaseline * 100} % of their rate over ` +
        `${refusals.baseline}, for ${refusals.for}: a release or a key store that refuses every caller ` +
        '(pets_authentication_failures_total by reason).',
    }),
    withRunbook(settings, {
      alert: 'PetsInstanceNotReady',
      expr: notReady,
      for: instanceTicketFor,
      labels: { severity: 'ticket' },
      summary: 'An instance answers 503 on /readyz, and is neither draining nor shedding',
      description:
        `{{ $labels.instance }} has not been ready for ${instanceTicketFor}: database unreachable from it, or ` +
        'schema not migrated (see its /readyz body and its log).',
    }),
    withRunbook(settings, {
      alert: 'PetsInstanceDown',
      expr: `up{${job}} == 0`,
      for: instanceTicketFor,
      labels: { severity: 'ticket' },
      summary: 'An instance has not answered scrapes',
      description: `{{ $labels.instance }} has not answered a scrape for ${instanceTicketFor}: crashed, hung or unreachable.`,
    }),
    withRunbook(settings, {
      alert: 'PetsDbPoolSaturated',
      expr:
        `pets_db_pool_waiting_requests{${job}} > 0\n  and pets_db_pool_connections{${job}} >= ` +
        `pets_db_pool_max_connections{${job}}`,
      for: '5m',
      labels: { severity: 'ticket' },
      summary: 'Every pooled PostgreSQL connection is busy and queries queue',
      description:
        '{{ $labels.instance }} has {{ $value }} queries waiting for a connection with all ' +
        'DATABASE_POOL_SIZE connections in use.',
    }),
    withRunbook(settings, {
      alert: 'PetsLoadShedding',
      // The gauge too: an instance out of the balancer for shedding gets no requests to shed.
      expr:
        `sum by (job, instance) (rate(pets_load_shed_requests_total{${job}}[5m])) > 0\n` +
        `or\nmax by (job, instance) (pets_load_shedding{${job}}) > 0`,
      for: '5m',
      labels: { severity: 'ticket' },
      summary: 'An instance sheds API requests (503 with Retry-After)',
      description:
        `{{ $labels.instance }} sheds API requests because its ${sheddingLimitText()}: reason ` +
        `${shedReasons.join(', ')}.`,
    }),
  ];
  return { name: 'pet-store-service', rules };
}
