import type { Objective } from './objectives.js';
import { serviceMatchers, type RuleSettings } from './settings.js';

/**
 * Prometheus rules from the objectives: per operation, the error ratio of
 * each objective over each window (recording rules), and the multiwindow,
 * multi-burn-rate alerts of the Google SRE workbook (chapter "Alerting on
 * SLOs"): a page when the budget burns 14.4 times too fast over 1 h and 5 min
 * (2 % of a 30-day budget in an hour) or 6 times over 6 h and 30 min (5 % in
 * six hours); a ticket at 1 time over 3 days and 6 h (10 % in three days).
 * The short window of each pair makes the alert stop soon after the burn does.
 *
 * Two guards keep the page for what needs a person (docs/alerts.md): a floor
 * on bad answers in the long window (the SRE workbook's low-traffic caveat:
 * at one request a minute a single 5xx is 1.7 % of the hour), and a `for` a
 * little longer than the short window, so that a burn which ends by itself
 * within about a minute (a failover) does not page.
 */

/** A window's name (as in the recorded series' names) and its length in seconds. */
export interface Window {
  name: string;
  seconds: number;
}

const minute = 60;
const hour = 60 * minute;
const day = 24 * hour;
export const windows = {
  '5m': { name: '5m', seconds: 5 * minute },
  '30m': { name: '30m', seconds: 30 * minute },
  '1h': { name: '1h', seconds: hour },
  '6h': { name: '6h', seconds: 6 * hour },
  '3d': { name: '3d', seconds: 3 * day },
  '30d': { name: '30d', seconds: 30 * day },
} as const satisfies Record<string, Window>;

/**
 * The retention Prometheus needs: the 30-day ratio reads a month of samples,
 * and Prometheus deletes whole blocks once past retention (15 days by
 * default), so 30 days and a margin for the blocks at the edge.
 */
export const minimumRetentionDays = 35;

/**
 * The alerts: which windows, how many times the budget rate, at what
 * severity, and whether the pair waits for its long window's history
 * (`shortHistory`).
 */
export const burnRates = [
  { severity: 'page', long: windows['1h'], short: windows['5m'], factor: 14.4, needsHistory: false },
  { severity: 'page', long: windows['6h'], short: windows['30m'], factor: 6, needsHistory: true },
  { severity: 'ticket', long: windows['3d'], short: windows['6h'], factor: 1, needsHistory: false },
] as const;

/**
 * The 6 h and 30 min pair judges only once the operation's answers reach
 * back `seconds` (5 h 45 min). Over a shorter history, rate() over 6 hours
 * divides what the few minutes there are hold: 40 minutes into a job, a
 * 60 s failover is 2.5 % of its answers, over 6 times the budget, and the
 * 30-minute short window keeps it there far past the hold, so it pages;
 * over a full 6 hours it is 0.28 %, and pages nobody. The 1 h and 5 min
 * pair needs no such wait: its 5-minute window and the hold already end a
 * short burn, so it pages a real outage from the job's first minutes.
 *
 * Why 5 h 45 min and not 6 h: the oldest sample seldom falls on the
 * window's first second, and a 2-minute total outage (docs/alerts.md:
 * pages nobody) stays under 6 times the budget over 5 h 45 min (0.58 %) as
 * over 6 h (0.56 %), where 5 h 30 min would page it (0.61 %).
 *
 * How: a sample of the answers counted in the window's first 15 minutes,
 * `present_over_time(...[15m] offset 5h45m)`. That reads 15 minutes of
 * the raw counters, where a subquery over the window
 * (`count_over_time(...[6h:5m])`, `min_over_time(timestamp(...)[6h:5m])`)
 * evaluates its selector 72 times at every evaluation; and it holds at any
 * scrape interval, where a count of raw samples would need to know it. A
 * scrape gap of more than 15 minutes 5 h 45 min ago holds the pair back
 * for as long as the gap: the 1 h pair still pages meanwhile.
 */
export const shortHistory = {
  window: windows['6h'],
  seconds: 5 * hour + 45 * minute,
  probe: 15 * minute,
} as const;

/**
 * How long the page's condition must hold: a minute past the 5-minute short
 * window, which a 1-minute total outage keeps above the burn rate for about
 * five minutes (the 1-hour window crosses 14.4 times 0.1 % after 52 s of it).
 * A 3-minute outage holds it for about seven, and pages.
 */
export const pageForSeconds = 6 * minute;

/**
 * The low-traffic page (the SRE workbook's "Alerting on SLOs", low-traffic
 * services: a minimum count of failures rather than a rate): below about
 * 12 requests an hour the burn-rate page's floor (10 bad answers an hour)
 * is never reached, however completely an operation fails. So an operation
 * pages too when nearly all of its answers over the last half hour failed
 * (share) and at least `minimumBadAnswers` failed within the hour: at 6
 * requests an hour, all failing, the third failure comes half an hour in
 * and pages after the same hold as the burn; a single failure, two in a
 * row, or one in two, never. The half hour (not the hour) lets the share
 * leave the last good answers behind soon enough to page within the hour.
 * Quieter still (1 or 2 an hour) an hour holds too few answers to tell:
 * `failingRarely` waits for a second failure.
 */
export const failing = {
  share: 0.9,
  shareWindow: windows['30m'],
  minimumBadAnswers: 3,
  window: windows['1h'],
} as const;

/**
 * The low-traffic page's second condition, for 1 or 2 requests an hour:
 * every answer of the last 90 minutes failed (a share of 0.9: under 10
 * answers, that is all of them), and at least 2 within 150 minutes. Two
 * failures in a row are the fewest that tell an outage from a mishap, so a
 * single failure never pages. The share's window lets go of the last good
 * answer by the time the second failure comes an hour after the first (at
 * 1 an hour), or the third (at 2 an hour); the count's window always holds
 * the last two failures an hour apart, so the page does not resolve
 * between them. Under 1 an hour two answers seldom fall in those windows:
 * the probes of the read operations page for those (probes.ts), the slow
 * burn tickets the rest.
 */
export const failingRarely = {
  share: failing.share,
  shareWindow: { name: '90m', seconds: 90 * minute },
  minimumBadAnswers: 2,
  window: { name: '150m', seconds: 150 * minute },
} as const satisfies { share: number; shareWindow: Window; minimumBadAnswers: number; window: Window };

/** The low-traffic page's name. */
export const failingAlert = 'PetsOperationFailing';

/** The two objectives each operation has, and what is counted for each. */
export const objectiveKinds = ['availability', 'latency'] as const;
export type ObjectiveKind = (typeof objectiveKinds)[number];

const histogram = 'http_server_request_duration_seconds';
/** Answers counted: all but 4xx (the client's doing, in neither ratio); the dashboard's ratios count the same. */
export const counted = 'status_code!~"4.."';

/**
 * The recorded error ratio of one objective over one window, named by the
 * `level:metric:operations` convention: the output is by job and operation,
 * e.g. `job_operation:pets_slo_availability_errors:ratio_rate5m`.
 */
export function ratioName(kind: ObjectiveKind, window: Window): string {
  return `job_operation:pets_slo_${kind}_errors:ratio_rate${window.name}`;
}

/** The recorded number of bad answers of one objective in a (long) window: `..._bad_answers:increase1h`. */
export function badAnswersName(kind: ObjectiveKind, window: Window): string {
  return `job_operation:pets_slo_${kind}_bad_answers:increase${window.name}`;
}

/** The page's floor in a long window: the objective's bad answers per hour times the window's hours (at least 1). */
export function floorOf(objective: Objective, window: Window): number {
  return Math.max(1, Math.round((objective.minimumBadAnswersPerHour * window.seconds) / hour));
}

/**
 * The matcher of the histogram bucket at a threshold. Prometheus 2 stores an
 * integer bound as le="1", Prometheus 3 normalises it to le="1.0": an
 * integer threshold matches both, any other its one spelling.
 */
export function bucketMatcher(thresholdSeconds: number): string {
  return Number.isInteger(thresholdSeconds)
    ? `le=~"${thresholdSeconds}|${thresholdSeconds}\\\\.0"`
    : `le="${thresholdSeconds}"`;
}

/** The alert's name for one objective and severity: PetsAvailabilityFastBurn (page), PetsLatencySlowBurn (ticket). */
export function alertName(kind: ObjectiveKind, severity: 'page' | 'ticket'): string {
  const what = kind === 'availability' ? 'Availability' : 'Latency';
  return `Pets${what}${severity === 'page' ? 'Fast' : 'Slow'}Burn`;
}

/** The share of answers an objective lets fail (its error budget): 99.9 -> 0.001. */
export function budgetOf(objective: Objective, kind: ObjectiveKind): number {
  const percent = kind === 'availability' ? objective.availability : objective.latency.percent;
  return Number((100 - percent).toFixed(6)) / 100;
}

/** The objective as a label value and in prose: "99.9" for availability, "99% within 0.25s" for latency. */
export function objectiveLabel(objective: Objective, kind: ObjectiveKind): string {
  return kind === 'availability'
    ? String(objective.availability)
    : `${objective.latency.percent}% within ${objective.latency.thresholdSeconds}s`;
}

/** A Prometheus duration for seconds divided by scale, in whole seconds (at least 1). */
export function duration(seconds: number, scale: number): string {
  const scaled = Math.max(1, Math.round(seconds / scale));
  if (scaled % day === 0) return `${scaled / day}d`;
  if (scaled % hour === 0) return `${scaled / hour}h`;
  if (scaled % minute === 0) return `${scaled / minute}m`;
  return `${scaled}s`;
}

/** Seconds as an operator reads them: 5 h 45 min, 6 h, 30 min. */
export function inWords(seconds: number): string {
  const hours = Math.floor(seconds / hour);
  const minutes = Math.round((seconds % hour) / minute);
  return [hours ? `${hours} h` : '', minutes ? `${minutes} min` : ''].filter(Boolean).join(' ');
}

/**
 * The rule docs/alerts.md states (its generated `short-history` block), from
 * the constants the rules are made of.
 */
export function shortHistoryFact(): string {
  const gated = burnRates.find((rate) => rate.needsHistory)!;
  const ungated = burnRates.find((rate) => rate.severity === 'page' && !rate.needsHistory)!;
  return (
    `**Short history.** The ${inWords(gated.long.seconds)} and ${inWords(gated.short.seconds)} pair judges only once ` +
    `the operation's counted answers reach back ${inWords(shortHistory.seconds)} (a sample in the window's first ` +
    `${inWords(shortHistory.probe)}), because over less history its ${inWords(gated.long.seconds)} ratio is the ratio ` +
    `of the few minutes there are (40 minutes in, a 60 s failover is 2.5 % of them) and would page a short failover, ` +
    `while the ${inWords(ungated.long.seconds)} and ${inWords(ungated.short.seconds)} pair pages a real outage from ` +
    `the first minutes.`
  );
}

function errorRatio(objective: Objective, kind: ObjectiveKind, range: string, service: string): string {
  const operation = `${service},operation="${objective.operation}"`;
  const all = `sum by (job, operation) (rate(${histogram}_count{${operation},${counted}}[${range}]))`;
  if (kind === 'availability') {
    const failed = `sum by (job, operation) (rate(${histogram}_count{${operation},status_code=~"5.."}[${range}]))`;
    // 0 rather than nothing when no 5xx was ever answered.
    return `(\n  ${failed}\nor\n  0 * ${all}\n)\n/\n${all}`;
  }
  const le = bucketMatcher(objective.latency.thresholdSeconds);
  const fast = `sum by (job, operation) (rate(${histogram}_bucket{${operation},${counted},${le}}[${range}]))`;
  return `1 - ${fast}\n/\n${all}`;
}

function badAnswers(objective: Objective, kind: ObjectiveKind, range: string, service: string): string {
  const operation = `${service},operation="${objective.operation}"`;
  const all = `sum by (job, operation) (increase(${histogram}_count{${operation},${counted}}[${range}]))`;
  if (kind === 'availability') {
    const failed = `sum by (job, operation) (increase(${histogram}_count{${operation},status_code=~"5.."}[${range}]))`;
    return `${failed}\nor\n  0 * ${all}`;
  }
  const le = bucketMatcher(objective.latency.thresholdSeconds);
  const fast = `sum by (job, operation) (increase(${histogram}_bucket{${operation},${counted},${le}}[${range}]))`;
  return `${all}\n-\n${fast}`;
}

/** An alert's runbook: its section of docs/alerts.md (GitHub's anchor: the heading in lower case). */
export function runbookUrl(runbookBase: string, alert: string): string {
  return `${runbookBase}#${alert.toLowerCase()}`;
}

export interface RecordingRule {
  record: string;
  expr: string;
  /** The operation again (the series has it): promtool tells the rules apart by their labels. */
  labels: Record<string, string>;
}
export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  interval?: string;
  rules: Array<RecordingRule | AlertingRule>;
}

export interface RuleOptions extends RuleSettings {
  /** Windows divided by this (1 in production; a drill scales them down). */
  scale?: number;
}

/** The rule groups for the objectives: one per objective kind, and the 30-day budget apart (evaluated less often). */
export function objectiveRuleGroups(objectives: Objective[], options: RuleOptions): RuleGroup[] {
  const scale = options.scale ?? 1;
  const runbookBase = options.runbookBase;
  // Every input series of the service's job (and extra selector): a copy under another job pages nobody.
  const service = serviceMatchers(options);
  const alertWindows = [windows['5m'], windows['30m'], windows['1h'], windows['6h'], windows['3d']];
  const groups: RuleGroup[] = objectiveKinds.map((kind) => ({
    name: `pets-slo-${kind}`,
    rules: [
      ...objectives.flatMap((objective) =>
        alertWindows.map((window) => ({
          record: ratioName(kind, window),
          expr: errorRatio(objective, kind, duration(window.seconds, scale), service),
          labels: { operation: objective.operation },
        })),
      ),
      ...objectives.flatMap((objective) =>
        pageWindows.map((window) => ({
          record: badAnswersName(kind, window),
          expr: badAnswers(objective, kind, duration(window.seconds, scale), service),
          labels: { operation: objective.operation },
        })),
      ),
      ...objectives.flatMap((objective) => alerts(objective, kind, runbookBase, scale, options.job, service)),
      ...(kind === 'availability'
        ? objectives.map((objective) => failingRule(objective, runbookBase, scale, options.job, service))
        : []),
    ],
  }));
  groups.push({
    name: 'pets-slo-budget',
    // A 30-day rate reads a month of samples: every 5 minutes is often enough for a budget.
    interval: duration(5 * minute, scale),
    rules: objectiveKinds.flatMap((kind) =>
      objectives.map((objective) => ({
        record: ratioName(kind, windows['30d']),
        expr: errorRatio(objective, kind, duration(windows['30d'].seconds, scale), service),
        labels: { operation: objective.operation },
      })),
    ),
  });
  return groups;
}

/** The long windows of the pages, whose bad answers are recorded for the floor. */
const pageWindows = [
  ...new Set([...burnRates.filter((rate) => rate.severity === 'page').map((rate) => rate.long), failing.window]),
];

function alerts(
  objective: Objective,
  kind: ObjectiveKind,
  runbookBase: string,
  scale: number,
  job: string,
  service: string,
): AlertingRule[] {
  const budget = budgetOf(objective, kind);
  const selector = `{job="${job}",operation="${objective.operation}"}`;
  // The answers' history (shortHistory): any sample in the long window's first minutes.
  const answers = `${histogram}_count{${service},operation="${objective.operation}",${counted}}`;
  const history =
    `group by (job, operation) (present_over_time(${answers}[${duration(shortHistory.probe, scale)}] ` +
    `offset ${duration(shortHistory.seconds, scale)}))`;
  const condition = (rate: (typeof burnRates)[number]) =>
    `(\n  ${ratioName(kind, rate.long)}${selector} > (${rate.factor} * ${budget})\nand\n  ` +
    `${ratioName(kind, rate.short)}${selector} > (${rate.factor} * ${budget})` +
    (rate.severity === 'page'
      ? `\nand\n  ${badAnswersName(kind, rate.long)}${selector} >= ${floorOf(objective, rate.long)}`
      : '') +
    (rate.needsHistory ? `\nand on (job, operation)\n  ${history}` : '') +
    `\n)`;
  const what =
    kind === 'availability'
      ? `${objective.availability}% of answers not 5xx`
      : `${objective.latency.percent}% of answers within ${objective.latency.thresholdSeconds} s`;
  return (['page', 'ticket'] as const).map((severity) => {
    const rates = burnRates.filter((rate) => rate.severity === severity);
    const name = alertName(kind, severity);
    const floor =
      severity === 'page'
        ? ` It pages once at least ${rates.map((rate) => `${floorOf(objective, rate.long)} in ${rate.long.name}`).join(' or ')} ` +
          `answers were bad, and the burn has lasted ${duration(pageForSeconds, 1)}; ` +
          `the ${shortHistory.window.name} pair only once its answers reach back ${inWords(shortHistory.seconds)}.`
        : '';
    return {
      alert: name,
      expr: rates.map(condition).join('\nor\n'),
      ...(severity === 'page' ? { for: duration(pageForSeconds, scale) } : {}),
      labels: { operation: objective.operation, slo: kind, objective: objectiveLabel(objective, kind), severity },
      annotations: {
        summary: `${objective.operation} burns its ${kind} error budget ${severity === 'page' ? 'fast' : 'slowly'}`,
        description:
          `${objective.operation} (${objective.method} ${objective.path}) misses ${what}: its errors run at more than ` +
          `${rates.map((rate) => `${rate.factor}x`).join(' or ')} the budget of ${Number((budget * 100).toFixed(4))}% ` +
          `over the ${rates.map((rate) => `${rate.long.name} and ${rate.short.name}`).join(', or ')} windows.` +
          floor,
        runbook_url: runbookUrl(runbookBase, name),
      },
    };
  });
}

/**
 * The low-traffic page of one operation: nearly every answer of the last half hour failed and at least 3
 * within the hour (failing), or every answer of the last 90 minutes and at least 2 within 150 (failingRarely).
 */
function failingRule(
  objective: Objective,
  runbookBase: string,
  scale: number,
  job: string,
  service: string,
): AlertingRule {
  const selector = `{job="${job}",operation="${objective.operation}"}`;
  const rareShare = duration(failingRarely.shareWindow.seconds, scale);
  const rareCount = duration(failingRarely.window.seconds, scale);
  return {
    alert: failingAlert,
    expr:
      `(\n  ${ratioName('availability', failing.shareWindow)}${selector} >= ${failing.share}\nand\n  ` +
      `${badAnswersName('availability', failing.window)}${selector} >= ${failing.minimumBadAnswers}\n)\nor\n(\n  ` +
      `(\n  ${errorRatio(objective, 'availability', rareShare, service)}\n  ) >= ${failingRarely.share}\nand\n  ` +
      `(\n  ${badAnswers(objective, 'availability', rareCount, service)}\n  ) >= ${failingRarely.minimumBadAnswers}\n)`,
    for: duration(pageForSeconds, scale),
    labels: {
      operation: objective.operation,
      slo: 'availability',
      objective: objectiveLabel(objective, 'availability'),
      severity: 'page',
    },
    annotations: {
      summary: `${objective.operation} fails nearly every request`,
      description:
        `${objective.operation} (${objective.method} ${objective.path}) answered 5xx to at least ` +
        `${failing.share * 100}% of its requests over the last ${failing.shareWindow.name}, and ${failing.minimumBadAnswers} ` +
        `or more within ${failing.window.name} (or all of them over ${failingRarely.shareWindow.name}, and ` +
        `${failingRarely.minimumBadAnswers} or more within ${failingRarely.window.name}): it is down for its callers, ` +
        `however few they are.`,
      runbook_url: runbookUrl(runbookBase, failingAlert),
    },
  };
}
