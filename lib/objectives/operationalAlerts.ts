import { configSchema } from '../../src/config/schema.js';
import { shedReasons } from '../../src/http/arrival/loadShedding.js';
import { httpLimits } from '../../src/http/limits.js';
import { runbookUrl, type AlertingRule, type RuleGroup } from './rules.js';
import type { RuleSettings } from './settings.js';

/**
 * The alerts that are not objectives (deploy/prometheus/alerts.yml): the
 * service gone, an instance not ready, the pool saturated, load shed. They
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

export function operationalRuleGroup(settings: RuleSettings): RuleGroup {
  const job = `job="${settings.job}"`;
  const alerts: AlertingRule[] = [
    withRunbook(settings, {
      alert: 'PetsDown',
      // Every target of the job down, the job gone from discovery, or no request metric scraped: with the
      // process gone there is no ratio for a burn-rate alert to compare, so absence pages on its own.
      expr: [
        `max by (job) (up{${job}}) == 0`,
        `absent(up{${job}})`,
        `absent_over_time(http_server_request_duration_seconds_count{${job}}[${absence.window}])`,
      ].join('\nor\n'),
      for: absence.for,
      labels: { severity: 'page' },
      summary: 'The pet store service is down: no target of its job answers scrapes, or it exports no request metric',
      description:
        `No target of job {{ $labels.job }} has answered a scrape, or none has exported ` +
        `http_server_request_duration_seconds for ${absence.window}, for ${absence.for}: the service is down or unscraped.`,
    }),
    withRunbook(settings, {
      alert: 'PetsNotReady',
      // A planned drain answers 503 on /readyz on purpose (pets_draining 1): that is not an outage.
      expr: 'pets_ready == 0\n  unless on (job, instance) pets_draining > 0',
      for: '2m',
      labels: { severity: 'page' },
      summary: 'An instance answers 503 on /readyz and is not draining',
      description:
        '{{ $labels.instance }} has not been ready for 2 minutes: database unreachable, schema not migrated, ' +
        'or shedding load (see its /readyz body, its log and pets_load_shed_requests_total).',
    }),
    withRunbook(settings, {
      alert: 'PetsDbPoolSaturated',
      expr: 'pets_db_pool_waiting_requests > 0\n  and pets_db_pool_connections >= pets_db_pool_max_connections',
      for: '5m',
      labels: { severity: 'ticket' },
      summary: 'Every pooled PostgreSQL connection is busy and queries queue',
      description:
        '{{ $labels.instance }} has {{ $value }} queries waiting for a connection with all ' +
        'DATABASE_POOL_SIZE connections in use.',
    }),
    withRunbook(settings, {
      alert: 'PetsLoadShedding',
      expr: 'sum by (job, instance) (rate(pets_load_shed_requests_total[5m])) > 0',
      for: '5m',
      labels: { severity: 'ticket' },
      summary: 'An instance sheds API requests (503 with Retry-After)',
      description:
        `{{ $labels.instance }} sheds API requests because its ${sheddingLimitText()}: reason ` +
        `${shedReasons.join(', ')}.`,
    }),
  ];
  return { name: 'pet-store-service', rules: alerts };
}
