import { shedReasons } from '../../src/http/arrival/loadShedding.js';
import type { Objective } from './objectives.js';
import { operationalRuleGroup } from './operationalAlerts.js';
import { alertName, objectiveRuleGroups, type AlertingRule } from './rules.js';
import type { RuleSettings } from './settings.js';

/**
 * promtool unit tests for the generated rules (deploy/prometheus/*.test.yml),
 * runnable as `promtool test rules deploy/prometheus/*test*.yml`. Every
 * scenario starts after three days of clean traffic, as a real service has,
 * so that the 6-hour and 3-day windows hold real history: a burst must be
 * big enough to show against it, and a slow burn must last to ticket.
 * Expected labels and annotations are read from the rules themselves.
 */

/** Minutes of clean history before each scenario. */
export const historyMinutes = 3 * 24 * 60;

/**
 * Whether the request counters have a sample at this minute: every minute
 * over the last 6 hours of history and the scenario, every hour before.
 * The 3-day rate reads the same increase from either, and the windows
 * that end near the scenario (5 minutes to 6 hours) read one a minute.
 */
const scraped = (minute: number) => minute >= historyMinutes - 6 * 60 || minute % 60 === 0;

const instance = 'a:9464';

/** A counter's samples, one a minute; undefined where no sample was scraped. */
type Samples = Array<number | undefined>;

/** Promtool's expanding notation for samples: runs of equal steps as `a+bxn`. */
export function expand(samples: Samples): string {
  const parts: string[] = [];
  let i = 0;
  while (i < samples.length) {
    const start = samples[i];
    if (start === undefined) {
      let missing = 1;
      while (i + missing < samples.length && samples[i + missing] === undefined) missing += 1;
      parts.push(missing === 1 ? '_' : `_x${missing}`);
      i += missing;
      continue;
    }
    let n = 0;
    const next = samples[i + 1];
    const step = next === undefined ? 0 : next - start;
    while (i + n + 1 < samples.length && samples[i + n + 1] === start + (n + 1) * step) n += 1;
    parts.push(n === 0 ? String(start) : `${start}${step < 0 ? '-' : '+'}${Math.abs(step)}x${n}`);
    i += n + 1;
  }
  return parts.join(' ');
}

/** Answers of one operation and status at a steady rate, from minute `from` to `to` of the scenario. */
export interface Answers {
  operation: string;
  status: number;
  perMinute: number;
  /** Share of them slower than the latency threshold (from minute slowFrom on, 0 by default). */
  slowShare?: number;
  slowFrom?: number;
  from?: number;
  to?: number;
  /** The process restarts at this minute: its counters start again from 0. */
  resetAt?: number;
}

function counter(answers: Answers, minutes: number, perMinute: (minute: number) => number): Samples {
  const from = answers.from ?? 0;
  const to = answers.to ?? minutes;
  const samples: Samples = [];
  let value = 0;
  for (let minute = 0; minute <= minutes; minute++) {
    if (minute === answers.resetAt) value = 0;
    if (minute > from && minute <= to) value += perMinute(minute);
    samples.push(scraped(minute) ? value : undefined);
  }
  return samples;
}

/** How Prometheus 2 (le="1") or 3 (le="1.0") stores an integer bucket bound. */
export type BoundSpelling = 'prometheus2' | 'prometheus3';

function leOf(seconds: number, spelling: BoundSpelling): string {
  return spelling === 'prometheus3' && Number.isInteger(seconds) ? `${seconds}.0` : String(seconds);
}

function requestSeries(
  objectives: Objective[],
  settings: RuleSettings,
  spelling: BoundSpelling,
  minutes: number,
  answers: Answers,
) {
  const objective = objectives.find((candidate) => candidate.operation === answers.operation)!;
  const labels =
    `job="${settings.job}",instance="${instance}",operation="${objective.operation}",` +
    `method="${objective.method}",status_code="${answers.status}"`;
  const fast = (minute: number) =>
    minute > (answers.slowFrom ?? 0)
      ? Math.round(answers.perMinute * (1 - (answers.slowShare ?? 0)))
      : answers.perMinute;
  const le = leOf(objective.latency.thresholdSeconds, spelling);
  return [
    {
      series: `http_server_request_duration_seconds_count{${labels}}`,
      values: expand(counter(answers, minutes, () => answers.perMinute)),
    },
    {
      series: `http_server_request_duration_seconds_bucket{${labels},le="${le}"}`,
      values: expand(counter(answers, minutes, fast)),
    },
  ];
}

interface AlertRuleTest {
  eval_time: string;
  alertname: string;
  exp_alerts: Array<{ exp_labels: Record<string, string>; exp_annotations: Record<string, string> }>;
}

/** The alert as promtool reports it: the rule's labels over the series', its annotations' templates filled. */
function expected(rule: AlertingRule, labels: Record<string, string>, value = '') {
  const all = { ...labels, ...rule.labels };
  const fill = (text: string) =>
    text
      .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, name: string) => all[name] ?? '')
      .replace(/\{\{ \$value \}\}/g, value);
  return {
    exp_labels: all,
    exp_annotations: Object.fromEntries(Object.entries(rule.annotations).map(([key, text]) => [key, fill(text)])),
  };
}

const at = (minute: number) => `${historyMinutes + minute}m`;

const objectiveAlertNames = (['availability', 'latency'] as const).flatMap((kind) =>
  (['page', 'ticket'] as const).map((severity) => alertName(kind, severity)),
);

/**
 * The unit tests of the objectives' rules: scenarios over the spec's own
 * operations: each burns in turn; then one that writes if there is one
 * (burning) and one other (slow) carry the other scenarios.
 */
export function objectiveRuleTests(
  objectives: Objective[],
  settings: RuleSettings,
  spelling: BoundSpelling = 'prometheus2',
) {
  const alerts = objectiveRuleGroups(objectives, settings)
    .flatMap((group) => group.rules)
    .filter((rule): rule is AlertingRule => 'alert' in rule);
  const burning = objectives.find((objective) => objective.method !== 'GET') ?? objectives[0]!;
  const slow = objectives.find((objective) => objective !== burning) ?? burning;
  /** What every objective alert should be at `minute`: the operations named fire, nothing else does. */
  const checks = (minute: number, firing: Record<string, Objective[]> = {}): AlertRuleTest[] =>
    objectiveAlertNames.map((alertname) => ({
      eval_time: at(minute),
      alertname,
      exp_alerts: (firing[alertname] ?? []).map((objective) =>
        expected(
          alerts.find((rule) => rule.alert === alertname && rule.labels['operation'] === objective.operation)!,
          { job: settings.job, operation: objective.operation },
        ),
      ),
    }));
  const scenario = (name: string, minutes: number, answers: (total: number) => Answers[], tests: AlertRuleTest[]) => {
    const total = historyMinutes + minutes;
    return {
      name,
      interval: '1m',
      input_series: answers(total).flatMap((one) => requestSeries(objectives, settings, spelling, total, one)),
      alert_rule_test: tests,
    };
  };
  const H = historyMinutes;
  const b = burning.operation;
  const only = (objective: Objective, perMinute = 1000): Answers => ({
    operation: objective.operation,
    status: objective === burning ? 201 : 200,
    perMinute,
  });
  // Each operation burns in turn, an hour apart, in the last 10 minutes of
  // its hour: its own alert pages, no other's.
  const turn = 60;
  const burst = (hour: number) => ({ from: H + hour * turn - 10, to: H + hour * turn });
  return [
    scenario(
      'a 10-minute burst (15 % failing) on each operation in turn pages for that operation alone, through the 1 h and 5 min pair alone, and stops with the burst',
      (objectives.length + 1) * turn,
      () =>
        objectives.flatMap((objective, index) => [
          only(objective),
          { operation: objective.operation, status: 503, perMinute: 176, ...burst(index + 1) },
        ]),
      [
        ...objectives.flatMap((objective, index) =>
          checks((index + 1) * turn, { PetsAvailabilityFastBurn: [objective] }),
        ),
        ...checks((objectives.length + 1) * turn),
      ],
    ),
    // The other scenarios hold the operation they are about alone: the rules
    // of every operation have the same form, and the turns above show each
    // reads its own operation's series.
    scenario(
      `a slow burn (5 times the budget) does not page, and tickets once it has spent 10 % of the budget in 3 days`,
      16 * 60,
      () => [only(burning), { operation: b, status: 500, perMinute: 5, from: H }],
      [...checks(6 * 60), ...checks(16 * 60, { PetsAvailabilitySlowBurn: [burning] })],
    ),
    scenario(
      'an error ratio within budget (half of it), fast answers and a restart (counters back to 0) fire nothing',
      60,
      () => [
        { ...only(burning, 2000), slowShare: 0.005, resetAt: H + 40 },
        { operation: b, status: 503, perMinute: 1, resetAt: H + 40 },
      ],
      [...checks(60), ...checks(2 * 60)],
    ),
    scenario(
      '4xx answers never count, however many and however slow',
      2 * 60,
      () => [
        only(burning),
        ...[400, 401, 404, 429].map((status) => ({ operation: b, status, perMinute: 1000, slowShare: 1, from: H })),
      ],
      [...checks(60), ...checks(2 * 60)],
    ),
    scenario(
      `every ${slow.operation} answer past its threshold for 20 minutes pages for ${slow.operation} latency only`,
      60,
      () => [{ ...only(slow), slowShare: 1, slowFrom: H + 40 }],
      checks(60, { PetsLatencyFastBurn: [slow] }),
    ),
  ];
}

/** The unit tests of the operational alerts (alerts.yml). */
export function operationalRuleTests(settings: RuleSettings) {
  const rules = operationalRuleGroup(settings).rules as AlertingRule[];
  const rule = (name: string) => rules.find((candidate) => candidate.alert === name)!;
  const H = historyMinutes;
  const job = settings.job;
  const series = (name: string, labels: string, samples: Samples) => ({
    series: `${name}{job="${job}"${labels}}`,
    values: expand(samples),
  });
  const steady = (minutes: number, value: (minute: number) => number | undefined): Samples =>
    Array.from({ length: minutes + 1 }, (_, minute) => value(minute));
  const requests = (minutes: number, upTo = minutes) =>
    steady(minutes, (minute) => (minute <= upTo ? minute * 100 : undefined));
  const requestLabels = (name: string) => `,instance="${name}",operation="listPets",method="GET",status_code="200"`;
  const outage = 2 * 60;
  const instanceLabels = (name: string) => ({ job, instance: name });
  const [down, gone, notReady, saturated]: Scenario[] = [
    {
      name: 'a two-hour outage (every target down, no request metric) pages within minutes and for all of it',
      interval: '1m',
      input_series: [
        series(
          'up',
          ',instance="a:9464"',
          steady(H + outage, (minute) => (minute <= H ? 1 : 0)),
        ),
        series(
          'up',
          ',instance="b:9464"',
          steady(H + outage, (minute) => (minute <= H ? 1 : 0)),
        ),
        series('http_server_request_duration_seconds_count', requestLabels('a:9464'), requests(H + outage, H)),
        series('http_server_request_duration_seconds_count', requestLabels('b:9464'), requests(H + outage, H)),
      ],
      alert_rule_test: [
        { eval_time: at(0), alertname: 'PetsDown', exp_alerts: [] },
        { eval_time: at(2), alertname: 'PetsDown', exp_alerts: [] },
        ...[5, 60, outage].map((minute) => ({
          eval_time: at(minute),
          alertname: 'PetsDown',
          exp_alerts: [expected(rule('PetsDown'), { job })],
        })),
      ],
    },
    {
      name: 'a job gone from discovery pages; one target of two down does not',
      interval: '1m',
      input_series: [
        series(
          'up',
          ',instance="a:9464"',
          steady(H + 30, (minute) => (minute <= H ? 1 : 0)),
        ),
        series(
          'up',
          ',instance="b:9464"',
          steady(H + 30, () => 1),
        ),
        series('http_server_request_duration_seconds_count', requestLabels('a:9464'), requests(H + 30, H)),
        series('http_server_request_duration_seconds_count', requestLabels('b:9464'), requests(H + 30)),
        // Another job's targets, then none of this one's at all.
        { series: 'up{job="elsewhere",instance="x:1"}', values: expand(steady(H + 60, () => 1)) },
      ],
      alert_rule_test: [
        { eval_time: at(30), alertname: 'PetsDown', exp_alerts: [] },
        { eval_time: at(60), alertname: 'PetsDown', exp_alerts: [expected(rule('PetsDown'), { job })] },
      ],
    },
    {
      name: 'an instance not ready pages; one not ready because it drains does not',
      interval: '1m',
      input_series: [
        series(
          'pets_ready',
          ',instance="a:9464"',
          steady(H + 10, (minute) => (minute <= H ? 1 : 0)),
        ),
        series(
          'pets_draining',
          ',instance="a:9464"',
          steady(H + 10, () => 0),
        ),
        series(
          'pets_ready',
          ',instance="b:9464"',
          steady(H + 10, (minute) => (minute <= H ? 1 : 0)),
        ),
        series(
          'pets_draining',
          ',instance="b:9464"',
          steady(H + 10, (minute) => (minute <= H ? 0 : 1)),
        ),
        series(
          'pets_ready',
          ',instance="c:9464"',
          steady(H + 10, () => 1),
        ),
        series(
          'pets_draining',
          ',instance="c:9464"',
          steady(H + 10, () => 0),
        ),
      ],
      alert_rule_test: [
        { eval_time: at(1), alertname: 'PetsNotReady', exp_alerts: [] },
        {
          eval_time: at(4),
          alertname: 'PetsNotReady',
          exp_alerts: [expected(rule('PetsNotReady'), instanceLabels('a:9464'))],
        },
      ],
    },
    {
      name: 'a saturated pool and load shedding ticket after 5 minutes',
      interval: '1m',
      input_series: [
        series(
          'pets_db_pool_waiting_requests',
          ',instance="a:9464"',
          steady(H + 10, (minute) => (minute <= H ? 0 : 3)),
        ),
        series(
          'pets_db_pool_connections',
          ',instance="a:9464"',
          steady(H + 10, () => 10),
        ),
        series(
          'pets_db_pool_max_connections',
          ',instance="a:9464"',
          steady(H + 10, () => 10),
        ),
        ...shedReasons.map((reason) =>
          series(
            'pets_load_shed_requests_total',
            `,instance="a:9464",reason="${reason}"`,
            steady(H + 10, (minute) => Math.max(0, minute - H) * 60),
          ),
        ),
      ],
      alert_rule_test: [
        { eval_time: at(4), alertname: 'PetsDbPoolSaturated', exp_alerts: [] },
        {
          eval_time: at(8),
          alertname: 'PetsDbPoolSaturated',
          exp_alerts: [expected(rule('PetsDbPoolSaturated'), instanceLabels('a:9464'), '3')],
        },
        {
          eval_time: at(8),
          alertname: 'PetsLoadShedding',
          exp_alerts: [expected(rule('PetsLoadShedding'), instanceLabels('a:9464'))],
        },
      ],
    },
  ];
  // Scenarios over different metrics and alerts share one timeline: promtool
  // evaluates every minute of the three days of history once for them all.
  return [together(down!, notReady!, saturated!), gone!];
}

interface Scenario {
  name: string;
  interval: string;
  input_series: unknown[];
  alert_rule_test: unknown[];
}

/** One scenario of several over disjoint series and alerts. */
function together(...scenarios: Scenario[]): Scenario {
  return {
    name: scenarios.map((scenario) => scenario.name).join('; '),
    interval: '1m',
    input_series: scenarios.flatMap((scenario) => scenario.input_series),
    alert_rule_test: scenarios.flatMap((scenario) => scenario.alert_rule_test),
  };
}

/**
 * How often promtool evaluates the objectives' rules in their tests: it
 * evaluates every rule at every step from the first minute of history, so
 * the step sets the cost (at 1 m the objectives' tests ran past ten
 * minutes). The burn-rate alerts have no `for`, so the step only decides
 * when they are looked at: every check is on the hour, each burst in the
 * 10 minutes before one. The samples stay one a minute near the checks, so
 * every window reads what production's would. The operational alerts have
 * `for` and few, cheap rules: they are evaluated every minute.
 */
export const objectiveEvaluationInterval = '1h';

/** A promtool test file: the rule files (relative to it), the evaluation step and the tests. */
export function testFile(ruleFiles: string[], tests: unknown[], evaluationInterval = '1m') {
  return { rule_files: ruleFiles, evaluation_interval: evaluationInterval, tests };
}
