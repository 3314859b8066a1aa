import { shedReasons } from '../../src/http/arrival/loadShedding.js';
import type { Objective } from './objectives.js';
import { operationalRuleGroup } from './operationalAlerts.js';
import { alertName, failing, failingAlert, failingRarely, objectiveRuleGroups, type AlertingRule } from './rules.js';
import { probeJobOf, readProbeJobOf, type RuleSettings } from './settings.js';

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
 * Minutes of clean history before the pages' scenarios: a page reads at most
 * 6 hours, so 7 hours hold every window it reads; the pages have a `for`, so
 * their tests are evaluated every minute, and three days of that cost minutes.
 */
export const pageHistoryMinutes = 7 * 60;

/** Minutes of history before the operational alerts' scenarios: they read 5 minutes at most. */
export const operationalHistoryMinutes = 60;

/**
 * Whether the request counters have a sample at this minute: every minute
 * over the last 6 hours of history and the scenario, every hour before.
 * The 3-day rate reads the same increase from either, and the windows
 * that end near the scenario (5 minutes to 6 hours) read one a minute.
 */
const scrapedAfter = (history: number) => (minute: number) => minute >= history - 6 * 60 || minute % 60 === 0;
const scraped = scrapedAfter(historyMinutes);

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
  /** The first minute Prometheus has a sample of (a job it scrapes only since then): none before. */
  firstSample?: number;
  /** The process restarts at this minute: its counters start again from 0. */
  resetAt?: number;
  /** No answers in these minutes (from, to]: an outage that fails every request. */
  pauses?: Array<[number, number]>;
  /** Answers only in every n-th minute (one 500 every 30 minutes), from minute everyFrom on (from by default). */
  every?: number;
  everyFrom?: number;
}

function counter(
  answers: Answers,
  minutes: number,
  perMinute: (minute: number) => number,
  isScraped: (minute: number) => boolean = scraped,
): Samples {
  const from = answers.from ?? 0;
  const to = answers.to ?? minutes;
  const paused = (minute: number) => (answers.pauses ?? []).some(([start, end]) => minute > start && minute <= end);
  const counts = (minute: number) =>
    minute > from &&
    minute <= to &&
    !paused(minute) &&
    (minute <= (answers.everyFrom ?? from) || (minute - from) % (answers.every ?? 1) === 0);
  const samples: Samples = [];
  let value = 0;
  for (let minute = 0; minute <= minutes; minute++) {
    if (minute === answers.resetAt) value = 0;
    // A job scraped only since firstSample: its counters start there, from 0.
    if (minute > (answers.firstSample ?? 0) && counts(minute)) value += perMinute(minute);
    samples.push(isScraped(minute) && minute >= (answers.firstSample ?? 0) ? value : undefined);
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
  isScraped: (minute: number) => boolean = scraped,
) {
  const objective = objectives.find((candidate) => candidate.operation === answers.operation)!;
  const labels =
    `job="${settings.job}",instance="${instance}",operation="${objective.operation}",` +
    `method="${objective.method}",status_code="${answers.status}"`;
  const fast = (minute: number) =>
    minute > (answers.slowFrom ?? 0) && answers.slowShare !== undefined
      ? Math.round(answers.perMinute * (1 - answers.slowShare))
      : answers.perMinute;
  const le = leOf(objective.latency.thresholdSeconds, spelling);
  return [
    {
      series: `http_server_request_duration_seconds_count{${labels}}`,
      values: expand(counter(answers, minutes, () => answers.perMinute, isScraped)),
    },
    {
      series: `http_server_request_duration_seconds_bucket{${labels},le="${le}"}`,
      values: expand(counter(answers, minutes, fast, isScraped)),
    },
  ];
}

interface AlertRuleTest {
  eval_time: string;
  alertname: string;
  exp_alerts: Array<{ exp_labels: Record<string, string>; exp_annotations: Record<string, string> }>;
}

/** The alert as promtool reports it: the rule's labels over the series', its annotations' templates filled. */
export function expected(
  rule: Pick<AlertingRule, 'labels' | 'annotations'>,
  labels: Record<string, string>,
  value = '',
) {
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

const at = (minute: number, history = historyMinutes) => `${history + minute}m`;

const severities = { page: ['page'], ticket: ['ticket'] } as const;

/**
 * The objectives' scenarios of one kind of test: which alerts they check
 * (pages or tickets), after how much history; `checks` says what every
 * such alert should be at a minute: the operations named fire, nothing else.
 */
function objectiveScenarios(
  objectives: Objective[],
  settings: RuleSettings,
  spelling: BoundSpelling,
  severity: keyof typeof severities,
) {
  const alerts = objectiveRuleGroups(objectives, settings)
    .flatMap((group) => group.rules)
    .filter((rule): rule is AlertingRule => 'alert' in rule);
  const history = severity === 'page' ? pageHistoryMinutes : historyMinutes;
  const isScraped = scrapedAfter(history);
  const names = [
    ...(['availability', 'latency'] as const).flatMap((kind) =>
      severities[severity].map((level) => alertName(kind, level)),
    ),
    ...(severity === 'page' ? [failingAlert] : []),
  ];
  const checks = (minute: number, firing: Record<string, Objective[]> = {}): AlertRuleTest[] =>
    names.map((alertname) => ({
      eval_time: at(minute, history),
      alertname,
      exp_alerts: (firing[alertname] ?? []).map((objective) =>
        expected(
          alerts.find((rule) => rule.alert === alertname && rule.labels['operation'] === objective.operation)!,
          { job: settings.job, operation: objective.operation },
        ),
      ),
    }));
  const scenario = (name: string, minutes: number, answers: (total: number) => Answers[], tests: AlertRuleTest[]) => {
    const total = history + minutes;
    return {
      name,
      interval: '1m',
      input_series: answers(total).flatMap((one) =>
        requestSeries(objectives, settings, spelling, total, one, isScraped),
      ),
      alert_rule_test: tests,
    };
  };
  const burning = objectives.find((objective) => objective.method !== 'GET') ?? objectives[0]!;
  const slow = objectives.find((objective) => objective !== burning) ?? burning;
  const only = (objective: Objective, perMinute = 1000): Answers => ({
    operation: objective.operation,
    status: objective === burning ? 201 : 200,
    perMinute,
  });
  return { checks, scenario, burning, slow, only, history };
}

/**
 * The unit tests of the objectives' pages (objectives-pages.test.yml):
 * scenarios over the spec's own operations, evaluated every minute (the
 * pages have a `for`) after 7 hours of clean history. Each operation burns
 * in turn; low traffic and a short failover page nobody, nor does one in a
 * job only 40 minutes old (too little history for the 6-hour pair), where a
 * real outage still pages.
 */
export function objectivePageTests(
  objectives: Objective[],
  settings: RuleSettings,
  spelling: BoundSpelling = 'prometheus2',
) {
  const {
    checks,
    scenario,
    burning,
    slow,
    only,
    history: H,
  } = objectiveScenarios(objectives, settings, spelling, 'page');
  const b = burning.operation;
  // Each operation burns in turn, an hour apart: 2,000 failures in 8 minutes, over the 1-hour pair's
  // 864 (14.4 x 0.1 % of 60,000) and under the 6-hour pair's 2,160, so that only the 1 h and 5 min pair pages.
  const turn = 60;
  // A job Prometheus has scraped for this long when its failure begins: too short for the 6-hour pair to judge.
  const youngMinutes = 40;
  const burst = (hour: number) => ({ from: H + hour * turn - 11, to: H + hour * turn - 3 });
  return [
    scenario(
      'a burst (8 minutes, 20 % failing) on each operation in turn pages for that operation alone, through the 1 h and 5 min pair alone, and stops after the burst',
      (objectives.length + 1) * turn,
      () =>
        objectives.flatMap((objective, index) => [
          only(objective),
          { operation: objective.operation, status: 503, perMinute: 250, ...burst(index + 1) },
        ]),
      [
        ...objectives.flatMap((objective, index) => [
          ...checks((index + 1) * turn - 6),
          ...checks((index + 1) * turn, { PetsAvailabilityFastBurn: [objective] }),
        ]),
        ...checks((objectives.length + 1) * turn),
      ],
    ),
    scenario(
      `every ${slow.operation} answer past its threshold for 20 minutes pages for ${slow.operation} latency only`,
      60,
      () => [{ ...only(slow), slowShare: 1, slowFrom: H + 40 }],
      checks(60, { PetsLatencyFastBurn: [slow] }),
    ),
    scenario(
      'at one request a minute, a single 500 pages nobody',
      60,
      () => [
        { ...only(burning, 1), pauses: [[H + 30, H + 31]] },
        { operation: b, status: 500, perMinute: 1, from: H + 30, to: H + 31 },
      ],
      [31, 32, 34, 36, 38, 40, 50, 60].flatMap((minute) => checks(minute)),
    ),
    scenario(
      `at one request a minute, half of them failing pages within the hour, once ${burning.minimumBadAnswersPerHour} have failed`,
      60,
      () => [
        { ...only(burning, 1), every: 2, everyFrom: H },
        { operation: b, status: 500, perMinute: 1, every: 2, from: H + 1 },
      ],
      [...checks(burning.minimumBadAnswersPerHour * 2 - 4), ...checks(60, { PetsAvailabilityFastBurn: [burning] })],
    ),
    scenario(
      `at 6 requests an hour, every one failing pages within the hour (${failing.minimumBadAnswers} failed); a single failure among them, or the only answer in half an hour failing (2 an hour), pages nobody`,
      3 * 60,
      () => [
        {
          ...only(burning, 1),
          every: 10,
          pauses: [
            [H, H + 60],
            [H + 149, H + 150],
          ],
        },
        { operation: b, status: 500, perMinute: 1, every: 10, from: H, to: H + 150, pauses: [[H + 60, H + 149]] },
        { ...only(slow, 1), every: 30, pauses: [[H + 149, H + 150]] },
        { operation: slow.operation, status: 500, perMinute: 1, from: H + 149, to: H + 150 },
      ],
      [
        ...checks(25),
        ...checks(60, { [failingAlert]: [burning] }),
        ...[100, 151, 155, 160, 170, 180].flatMap((minute) => checks(minute)),
      ],
    ),
    scenario(
      `at 1 request an hour, every ${b} request failing pages at the second failure, 66 minutes after the first ` +
        `(none served in ${failingRarely.shareWindow.name}, ${failingRarely.minimumBadAnswers} failed in ` +
        `${failingRarely.window.name}), and keeps paging; ` +
        `a single ${slow.operation} failure at 1 an hour pages nobody`,
      3 * 60,
      () => [
        { ...only(burning, 1), every: 60, from: -30, to: H - 30 },
        { operation: b, status: 500, perMinute: 1, every: 60, from: H - 30 },
        { ...only(slow, 1), every: 60, from: -30, pauses: [[H + 29, H + 30]] },
        { operation: slow.operation, status: 500, perMinute: 1, from: H + 29, to: H + 30 },
      ],
      [
        ...[40, 85, 95].flatMap((minute) => checks(minute)),
        ...[100, 130, 149, 160, 180].flatMap((minute) => checks(minute, { [failingAlert]: [burning] })),
      ],
    ),
    scenario(
      `at 2 requests an hour, every ${b} request failing pages at the third failure, 66 minutes after the first; ` +
        `at 3 an hour, every ${slow.operation} request failing pages 46 minutes after the first`,
      2 * 60 + 10,
      () => [
        { ...only(burning, 1), every: 30, to: H },
        { operation: b, status: 500, perMinute: 1, every: 30, from: H },
        { ...only(slow, 1), every: 20, to: H },
        { operation: slow.operation, status: 500, perMinute: 1, every: 20, from: H },
      ],
      [
        ...[40, 60].flatMap((minute) => checks(minute)),
        ...[70, 85].flatMap((minute) => checks(minute, { [failingAlert]: [slow] })),
        ...[100, 130].flatMap((minute) => checks(minute, { [failingAlert]: [burning, slow] })),
      ],
    ),
    scenario(
      'at one request a minute, one 500 every 30 minutes all day pages nobody (a ticket at most)',
      10 * 60,
      () => [only(burning, 1), { operation: b, status: 500, perMinute: 1, from: H, every: 30 }],
      [2, 4, 6, 8, 10].flatMap((hour) => checks(hour * 60)),
    ),
    scenario(
      `with a full history, errors at about 12 times the budget page after about 3 hours, through the 6 h and 30 min pair alone`,
      200,
      () => [only(burning), { operation: b, status: 500, perMinute: 12, from: H }],
      [...[60, 175].flatMap((minute) => checks(minute)), ...checks(195, { PetsAvailabilityFastBurn: [burning] })],
    ),
    scenario(
      `a job ${youngMinutes} minutes old: a 60 s failover (every write failing) pages nobody`,
      60,
      () => [
        { ...only(burning), firstSample: H - youngMinutes, pauses: [[H, H + 1]] },
        { operation: b, status: 503, perMinute: 1000, from: H, to: H + 1, firstSample: H - youngMinutes },
      ],
      [1, 3, 5, 7, 10, 15, 20, 25, 30, 40].flatMap((minute) => checks(minute)),
    ),
    scenario(
      `a job ${youngMinutes} minutes old: every write failing for 10 minutes pages through the 1 h and 5 min pair, and stops after`,
      30,
      () => [
        { ...only(burning), firstSample: H - youngMinutes, pauses: [[H, H + 10]] },
        { operation: b, status: 500, perMinute: 1000, from: H, to: H + 10, firstSample: H - youngMinutes },
      ],
      [
        ...checks(3),
        ...[8, 12].flatMap((minute) => checks(minute, { PetsAvailabilityFastBurn: [burning] })),
        ...checks(25),
      ],
    ),
    scenario(
      'a 1-minute failover (every answer fails) pages nobody; a 4-minute outage pages',
      3 * 60,
      () => [
        {
          ...only(burning),
          pauses: [
            [H + 30, H + 31],
            [H + 120, H + 124],
          ],
        },
        { operation: b, status: 503, perMinute: 1000, from: H + 30, to: H + 31 },
        { operation: b, status: 500, perMinute: 1000, from: H + 120, to: H + 124 },
      ],
      [
        ...[31, 33, 35, 37, 40, 60].flatMap((minute) => checks(minute)),
        ...checks(129, { PetsAvailabilityFastBurn: [burning] }),
      ],
    ),
  ];
}

/**
 * The unit tests of the objectives' tickets (objectives.test.yml): every
 * scenario after three days of clean traffic, so that the 6-hour and 3-day
 * windows hold real history, evaluated every hour (the tickets have no `for`).
 */
export function objectiveTicketTests(
  objectives: Objective[],
  settings: RuleSettings,
  spelling: BoundSpelling = 'prometheus2',
) {
  const { checks, scenario, burning, only, history: H } = objectiveScenarios(objectives, settings, spelling, 'ticket');
  const b = burning.operation;
  return [
    scenario(
      `a slow burn (5 times the budget) tickets once it has spent 10 % of the budget in 3 days`,
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
  ];
}

/** The unit tests of the operational alerts (alerts.yml). */
export function operationalRuleTests(settings: RuleSettings) {
  const rules = operationalRuleGroup(settings).rules.filter((rule): rule is AlertingRule => 'alert' in rule);
  const rule = (name: string) => rules.find((candidate) => candidate.alert === name)!;
  const H = operationalHistoryMinutes;
  const at = (minute: number) => `${H + minute}m`;
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
  const instanceLabels = (name: string) => ({ job, instance: name });
  /** The probe of /healthz on each host's API port, succeeding as `success` says. */
  const probes = (minutes: number, success: (minute: number, host: string) => number, hosts: string[] = ['a', 'b']) =>
    hosts.map((host) => ({
      series: `probe_success{job="${probeJobOf(job)}",instance="http://${host}:3000/healthz"}`,
      values: expand(steady(minutes, (minute) => success(minute, host))),
    }));
  /** The probe of listPets on each host, succeeding as `success` says. */
  const readProbes = (minutes: number, success: (minute: number, host: string) => number) =>
    ['a', 'b'].map((host) => ({
      series: `probe_success{job="${readProbeJobOf(job)}",instance="http://${host}:3000/v1/pets",operation="listPets"}`,
      values: expand(steady(minutes, (minute) => success(minute, host))),
    }));
  /** Two targets scraped and serving through the history, then unscrapable (up 0, no requests) to `minutes`. */
  const scrapedUntilHistoryEnds = (minutes: number) =>
    ['a:9464', 'b:9464'].flatMap((name) => [
      series(
        'up',
        `,instance="${name}"`,
        steady(minutes, (minute) => (minute <= H ? 1 : 0)),
      ),
      series('http_server_request_duration_seconds_count', requestLabels(name), requests(minutes, H)),
    ]);
  /** listPets answers of one status on instance a, `perMinute(minute)` of them each minute. */
  const answered = (minutes: number, status: number, perMinute: (minute: number) => number) => {
    let total = 0;
    return series(
      'http_server_request_duration_seconds_count',
      `,instance="a:9464",operation="listPets",method="GET",status_code="${status}"`,
      steady(minutes, (minute) => (total += minute === 0 ? 0 : perMinute(minute))),
    );
  };
  /** What each alert named should be at `minute`: the label sets given fire, nothing else. */
  const expect = (minute: number, firing: Record<string, Array<Record<string, string>>>, names: string[]) =>
    names.map((alertname) => ({
      eval_time: at(minute),
      alertname,
      exp_alerts: (firing[alertname] ?? []).map((labels) =>
        expected(rule(alertname), labels, alertname === 'PetsDbPoolSaturated' ? '3' : ''),
      ),
    }));
  /**
   * Three instances a, b, c, each with up, pets_ready, pets_draining and
   * pets_load_shedding from `state` per minute; `down` instances have no
   * samples but up 0.
   */
  type State = 'ready' | 'notReady' | 'draining' | 'shedding' | 'down';
  const fleet = (minutes: number, state: (instance: string, minute: number) => State) =>
    ['a:9464', 'b:9464', 'c:9464'].flatMap((name) => {
      const at = (minute: number) => state(name, minute);
      const gauge = (value: (state: State) => number) =>
        steady(minutes, (minute) => (at(minute) === 'down' ? undefined : value(at(minute))));
      return [
        series(
          'up',
          `,instance="${name}"`,
          steady(minutes, (minute) => (at(minute) === 'down' ? 0 : 1)),
        ),
        series(
          'pets_ready',
          `,instance="${name}"`,
          gauge((now) => (now === 'ready' ? 1 : 0)),
        ),
        series(
          'pets_draining',
          `,instance="${name}"`,
          gauge((now) => (now === 'draining' ? 1 : 0)),
        ),
        series(
          'pets_load_shedding',
          `,instance="${name}"`,
          gauge((now) => (now === 'shedding' ? 1 : 0)),
        ),
        series(
          'http_server_request_duration_seconds_count',
          requestLabels(name),
          steady(minutes, (minute) => (at(minute) === 'down' ? undefined : minute * 100)),
        ),
      ];
    });
  const readiness = ['PetsNotReady', 'PetsInstanceNotReady', 'PetsInstanceDown', 'PetsDown', 'PetsLoadShedding'];
  const scenarios: Scenario[] = [
    {
      name: 'a two-hour outage (every target down, no request metric, the probe failing) pages within minutes and for all of it',
      interval: '1m',
      input_series: [...scrapedUntilHistoryEnds(H + 120), ...probes(H + 120, (minute) => (minute <= H ? 1 : 0))],
      alert_rule_test: [
        ...expect(0, {}, ['PetsDown', 'PetsUnscrapable']),
        ...expect(2, {}, ['PetsDown']),
        ...[5, 60, 120].flatMap((minute) => expect(minute, { PetsDown: [{ job }] }, ['PetsDown', 'PetsUnscrapable'])),
      ],
    },
    {
      name: 'every probe of listPets failing while /healthz answers pages after 5 minutes; one instance failing it pages nobody',
      interval: '1m',
      input_series: [
        ...fleet(H + 60, () => 'ready'),
        ...probes(H + 60, () => 1),
        ...readProbes(H + 60, (minute, host) => (minute > H + (host === 'a' ? 0 : 20) ? 0 : 1)),
      ],
      alert_rule_test: [
        ...[10, 24].flatMap((minute) => expect(minute, {}, ['PetsReadProbeFailing', 'PetsDown'])),
        ...[30, 60].flatMap((minute) =>
          expect(minute, { PetsReadProbeFailing: [{ operation: 'listPets' }] }, ['PetsReadProbeFailing', 'PetsDown']),
        ),
      ],
    },
    {
      name: 'the service down, its read probes failing with /healthz, pages once: PetsDown, not PetsReadProbeFailing',
      interval: '1m',
      input_series: [
        ...scrapedUntilHistoryEnds(H + 30),
        ...probes(H + 30, (minute) => (minute <= H ? 1 : 0)),
        ...readProbes(H + 30, (minute) => (minute <= H ? 1 : 0)),
      ],
      alert_rule_test: [10, 30].flatMap((minute) =>
        expect(minute, { PetsDown: [{ job }] }, ['PetsDown', 'PetsReadProbeFailing']),
      ),
    },
    {
      name: 'every scrape failing while the probe of /healthz succeeds is a ticket (unscrapable), not a page (down, not serving)',
      interval: '1m',
      input_series: [...scrapedUntilHistoryEnds(H + 30), ...probes(H + 30, () => 1)],
      alert_rule_test: [10, 30].flatMap((minute) =>
        expect(minute, { PetsUnscrapable: [{ job }] }, ['PetsDown', 'PetsUnscrapable', 'PetsNotReady']),
      ),
    },
    {
      name: 'two instances of three scraped and ready but failing their probe of /healthz (the API port gone) page',
      interval: '1m',
      input_series: [
        ...fleet(H + 30, () => 'ready'),
        ...probes(H + 30, (minute, host) => (minute > H && host !== 'c' ? 0 : 1), ['a', 'b', 'c']),
      ],
      alert_rule_test: [
        ...expect(1, {}, ['PetsNotReady']),
        ...expect(10, { PetsNotReady: [{ job }] }, ['PetsNotReady', 'PetsDown']),
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
      name: 'one instance of three not ready is a ticket after 15 minutes, never a page',
      interval: '1m',
      input_series: fleet(H + 30, (name, minute) => (name === 'a:9464' && minute > H ? 'notReady' : 'ready')),
      alert_rule_test: [
        ...expect(10, {}, readiness),
        ...expect(20, { PetsInstanceNotReady: [instanceLabels('a:9464')] }, readiness),
      ],
    },
    {
      name: 'two instances of three not ready page; a 1-minute failover (all three not ready) pages nobody',
      interval: '1m',
      input_series: fleet(H + 60, (name, minute) =>
        (minute > H + 10 && minute <= H + 11) || (name !== 'c:9464' && minute > H + 30) ? 'notReady' : 'ready',
      ),
      alert_rule_test: [
        ...[11, 12, 14, 20].flatMap((minute) => expect(minute, {}, readiness)),
        ...expect(32, {}, ['PetsNotReady']),
        ...expect(35, { PetsNotReady: [{ job }] }, ['PetsNotReady']),
      ],
    },
    {
      name: 'one instance of three down is a ticket after 15 minutes; two down page',
      interval: '1m',
      input_series: fleet(H + 60, (name, minute) =>
        (name === 'a:9464' && minute > H) || (name === 'b:9464' && minute > H + 40) ? 'down' : 'ready',
      ),
      alert_rule_test: [
        ...expect(10, {}, readiness),
        ...expect(20, { PetsInstanceDown: [instanceLabels('a:9464')] }, readiness),
        ...expect(45, { PetsNotReady: [{ job }] }, ['PetsNotReady', 'PetsDown']),
      ],
    },
    {
      name: 'instances draining or shedding page nobody; shedding is its own ticket',
      interval: '1m',
      input_series: [
        ...fleet(H + 30, (name, minute) =>
          minute <= H ? 'ready' : name === 'a:9464' ? 'draining' : name === 'b:9464' ? 'shedding' : 'ready',
        ),
        ...shedReasons.map((reason) =>
          series(
            'pets_load_shed_requests_total',
            `,instance="b:9464",reason="${reason}"`,
            steady(H + 30, (minute) => Math.max(0, minute - H) * 60),
          ),
        ),
      ],
      alert_rule_test: [
        ...expect(4, {}, readiness),
        ...expect(20, { PetsLoadShedding: [instanceLabels('b:9464')] }, readiness),
      ],
    },
    {
      name: 'every listPets answer turning 401 at unchanged traffic pages within 15 minutes, for as long as it lasts',
      interval: '1m',
      input_series: [
        answered(H + 90, 200, (minute) => (minute <= H ? 1000 : 0)),
        answered(H + 90, 401, (minute) => (minute <= H ? 0 : 1000)),
      ],
      alert_rule_test: [
        ...expect(3, {}, ['PetsCallersRefused']),
        ...[15, 90].flatMap((minute) =>
          expect(minute, { PetsCallersRefused: [{ job, operation: 'listPets' }] }, ['PetsCallersRefused']),
        ),
      ],
    },
    {
      name: 'a 429 flood and one client with a bad key (most answers 4xx) page nobody while the others are served',
      interval: '1m',
      input_series: [
        answered(H + 90, 200, () => 1000),
        answered(H + 90, 401, (minute) => (minute <= H ? 0 : 5000)),
        answered(H + 90, 429, (minute) => (minute <= H ? 0 : 2000)),
      ],
      alert_rule_test: [15, 60, 90].flatMap((minute) => expect(minute, {}, ['PetsCallersRefused'])),
    },
    {
      name: 'a saturated pool tickets after 5 minutes',
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
      ],
      alert_rule_test: [
        ...expect(4, {}, ['PetsDbPoolSaturated']),
        ...expect(8, { PetsDbPoolSaturated: [instanceLabels('a:9464')] }, ['PetsDbPoolSaturated']),
      ],
    },
  ];
  return scenarios;
}

interface Scenario {
  name: string;
  interval: string;
  input_series: unknown[];
  alert_rule_test: unknown[];
}

/**
 * How often promtool evaluates the objectives' rules in the tickets' tests:
 * it evaluates every rule at every step from the first minute of history, so
 * the step sets the cost (three days at 1 m cost minutes). The tickets have
 * no `for`, so the step only decides when they are looked at: every check
 * is on the hour. The samples stay one a minute near the checks, so every
 * window reads what production's would. The pages have a `for`: their tests
 * (shorter history) and the operational alerts' are evaluated every minute.
 */
export const objectiveEvaluationInterval = '1h';

/** A promtool test file: the rule files (relative to it), the evaluation step and the tests. */
export function testFile(ruleFiles: string[], tests: unknown[], evaluationInterval = '1m') {
  return { rule_files: ruleFiles, evaluation_interval: evaluationInterval, tests };
}
