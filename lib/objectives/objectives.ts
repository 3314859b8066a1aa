import { durationBuckets } from '../../src/observability/metrics.js';

/**
 * The service-level objectives openapi.yaml states per operation (`x-slo`),
 * read into the shape the rule, dashboard and docs generators share.
 *
 * What counts: every answer of the operation except a 4xx (the client's
 * doing: neither good nor bad, left out of both ratios). Availability is the
 * share of those that are not 5xx, 503 with Retry-After included (a drain or
 * shedding is still a request the service did not serve); latency is the
 * share of those answered within the threshold. Both over a 30-day budget.
 */
export interface Objective {
  operation: string;
  method: string;
  path: string;
  /** Percent of counted answers that are not 5xx. */
  availability: number;
  latency: {
    /** A bucket boundary of http_server_request_duration_seconds. */
    thresholdSeconds: number;
    /** Percent of counted answers within thresholdSeconds. */
    percent: number;
  };
  /**
   * A burn-rate page needs at least this many bad answers per hour of its
   * long window (so 10 in the 1-hour window, 60 in the 6-hour one): below
   * it, too few answers fail for the ratio to say much, and the slow burn
   * opens a ticket at most (docs/alerts.md, "Quiet at low traffic").
   */
  minimumBadAnswersPerHour: number;
}

/** The objective every operation starts from unless it does more work (docs/alerts.md). */
export const defaultObjective = { availability: 99.9, latency: { thresholdSeconds: 0.25, percent: 99 } } as const;

/** The page floor of an operation whose x-slo does not set minimumBadAnswersPerHour (docs/alerts.md). */
export const defaultMinimumBadAnswersPerHour = 10;

/** The period an error budget is counted over. */
export const budgetPeriod = '30d';

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type SpecLike = { paths?: Record<string, Record<string, unknown> | undefined> };

function percentIn(value: unknown, low: number, where: string): number {
  if (typeof value !== 'number' || !(value >= low && value < 100))
    throw new Error(`${where} must be a number from ${low} to below 100, not ${JSON.stringify(value)}`);
  return value;
}

function floorOf(value: unknown, name: string): number {
  if (value === undefined) return defaultMinimumBadAnswersPerHour;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw new Error(
      `${name}: x-slo.minimumBadAnswersPerHour must be a whole number from 1, not ${JSON.stringify(value)}`,
    );
  return value;
}

/** Every operation's objective, in the spec's order; throws naming the operation whose x-slo is missing or wrong. */
export function objectivesOf(spec: SpecLike): Objective[] {
  const objectives: Objective[] = [];
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const method of methods) {
      const operation = item?.[method] as { operationId?: string; 'x-slo'?: unknown } | undefined;
      if (operation === undefined) continue;
      const name = operation.operationId ?? `${method.toUpperCase()} ${path}`;
      const slo = operation['x-slo'] as
        | {
            availability?: unknown;
            latency?: { thresholdSeconds?: unknown; percent?: unknown };
            minimumBadAnswersPerHour?: unknown;
          }
        | undefined;
      if (slo === undefined) throw new Error(`${name} has no x-slo: every operation states its objectives`);
      const thresholdSeconds = slo.latency?.thresholdSeconds;
      if (typeof thresholdSeconds !== 'number' || !durationBuckets.includes(thresholdSeconds))
        throw new Error(
          `${name}: x-slo.latency.thresholdSeconds must be a bucket of http_server_request_duration_seconds ` +
            `(${durationBuckets.join(', ')}), not ${JSON.stringify(thresholdSeconds)}`,
        );
      objectives.push({
        operation: name,
        method: method.toUpperCase(),
        path,
        availability: percentIn(slo.availability, 90, `${name}: x-slo.availability`),
        latency: { thresholdSeconds, percent: percentIn(slo.latency?.percent, 50, `${name}: x-slo.latency.percent`) },
        minimumBadAnswersPerHour: floorOf(slo.minimumBadAnswersPerHour, name),
      });
    }
  }
  return objectives;
}
