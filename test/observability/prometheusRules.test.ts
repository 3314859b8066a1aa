import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { ensurePackages, promtoolBin } from '../../lib/instances/index.js';
import { objectivesOf } from '../../lib/objectives/objectives.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { scratchDir } from '../helpers/scratchSpace.js';

/**
 * The shipped rules (deploy/prometheus/objectives.yml, generated from x-slo,
 * and alerts.yml) pass `promtool check rules`, and `promtool test rules`
 * feeds them series and expects what fires: a fast burn pages for its
 * operation only, a slow burn tickets without paging, a ratio within budget
 * and 4xx answers fire nothing, a drain is not an outage. Then each rule is
 * broken once (a wrong label matcher) and the same tests must fail.
 *
 * promtool is Debian's prometheus package: installed here as root when
 * missing (.ci/run installs it first); only a non-root run without it skips.
 */

const job = 'pet-store-service';
const rulesPath = join(repoRoot, 'deploy/prometheus/objectives.yml');
const alertsPath = join(repoRoot, 'deploy/prometheus/alerts.yml');
const spec = parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8')) as Parameters<typeof objectivesOf>[0];
const thresholds = new Map(objectivesOf(spec).map((objective) => [objective.operation, objective.latency]));
const methods = { listPets: 'GET', createPet: 'POST', getPet: 'GET' } as const;
type Operation = keyof typeof methods;

interface Rule {
  alert?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rulesOf = (text: string) =>
  (parse(text) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((group) => group.rules);

/** Answers of one (operation, status) at a steady rate; `slowShare` of them above the latency threshold. */
interface Answers {
  operation: Operation;
  status: number;
  perMinute: number;
  minutes: number;
  slowShare?: number;
  /** The counter stops growing after this many minutes. */
  stopAfter?: number;
  /** The counter starts growing after this many minutes. */
  startAfter?: number;
}

function counter(perMinute: number, minutes: number, stopAfter = minutes, startAfter = 0): string {
  const parts = startAfter > 0 ? [`0x${startAfter - 1}`] : [];
  parts.push(`0+${perMinute}x${stopAfter - startAfter}`);
  if (stopAfter < minutes) parts.push(`${perMinute * (stopAfter - startAfter)}+0x${minutes - stopAfter - 1}`);
  return parts.join(' ');
}

function series(answers: Answers): Array<{ series: string; values: string }> {
  const labels = `job="${job}",instance="a:9464",operation="${answers.operation}",method="${methods[answers.operation]}",status_code="${answers.status}"`;
  const le = String(thresholds.get(answers.operation)!.thresholdSeconds);
  const fast = Math.round(answers.perMinute * (1 - (answers.slowShare ?? 0)));
  return [
    {
      series: `http_server_request_duration_seconds_count{${labels}}`,
      values: counter(answers.perMinute, answers.minutes, answers.stopAfter, answers.startAfter),
    },
    {
      series: `http_server_request_duration_seconds_bucket{${labels},le="${le}"}`,
      values: counter(fast, answers.minutes, answers.stopAfter, answers.startAfter),
    },
  ];
}

const objectiveAlerts = [
  'PetsAvailabilityFastBurn',
  'PetsAvailabilitySlowBurn',
  'PetsLatencyFastBurn',
  'PetsLatencySlowBurn',
] as const;

/** The alert the rules file says `alert` for `operation` fires with: its labels and annotations. */
function expected(rules: Rule[], alert: string, labels: Record<string, string>, value = '') {
  const rule = rules.find(
    (candidate) =>
      candidate.alert === alert &&
      (labels['operation'] === undefined || candidate.labels?.['operation'] === labels['operation']),
  );
  if (!rule) throw new Error(`no rule ${alert} for ${JSON.stringify(labels)}`);
  const all = { ...labels, ...rule.labels };
  const expand = (text: string) =>
    text
      .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, name: string) => all[name] ?? '')
      .replace(/\{\{ \$value \}\}/g, value);
  return {
    exp_labels: all,
    exp_annotations: Object.fromEntries(
      Object.entries(rule.annotations ?? {}).map(([key, text]) => [key, expand(text)]),
    ),
  };
}

/** What every objective alert should be at `at`: the operations named fire, nothing else does. */
function objectiveChecks(
  rules: Rule[],
  at: string,
  firing: Partial<Record<(typeof objectiveAlerts)[number], Operation[]>>,
) {
  return objectiveAlerts.map((alertname) => ({
    eval_time: at,
    alertname,
    exp_alerts: (firing[alertname] ?? []).map((operation) => expected(rules, alertname, { job, operation })),
  }));
}

const healthyReads = (minutes: number): Answers[] => [
  { operation: 'listPets', status: 200, perMinute: 1000, minutes },
  { operation: 'getPet', status: 200, perMinute: 500, minutes },
];

function unitTests(rules: Rule[]) {
  // Long enough for the ticket's windows to hold a steady ratio (rate() reads what there is of 6 h and 3 d).
  const hours = 2 * 60;
  const burstStart = 6 * 60;
  const burstEnd = burstStart + 6;
  return [
    {
      name: 'a fast burn on createPet pages for createPet within its short window, and stops with the burn',
      input: [
        ...healthyReads(50),
        { operation: 'createPet', status: 201, perMinute: 1000, minutes: 50 },
        // 9 % of createPet fails for 10 minutes: 90 times its budget.
        { operation: 'createPet', status: 503, perMinute: 100, minutes: 50, stopAfter: 10 },
      ] satisfies Answers[],
      checks: [
        ...objectiveChecks(rules, '5m', {
          PetsAvailabilityFastBurn: ['createPet'],
          PetsAvailabilitySlowBurn: ['createPet'],
        }),
        // The page stops once neither short window (5 and 30 minutes) holds a failure; the ticket goes on.
        ...objectiveChecks(rules, '45m', { PetsAvailabilitySlowBurn: ['createPet'] }),
      ],
    },
    {
      name: 'a 5-minute burst after 6 clean hours pages through the 1 h and 5 min pair alone',
      input: [
        { operation: 'listPets', status: 200, perMinute: 1000, minutes: burstEnd },
        { operation: 'createPet', status: 201, perMinute: 1000, minutes: burstEnd },
        // 20 % of createPet fails from 6 h on: the 1 h ratio passes 14.4 times the budget after
        // 5 minutes, the 6 h ratio stays below 6 times it.
        {
          operation: 'createPet',
          status: 503,
          perMinute: 250,
          minutes: burstEnd,
          startAfter: burstStart,
        },
      ] satisfies Answers[],
      checks: objectiveChecks(rules, `${burstEnd}m`, {
        PetsAvailabilityFastBurn: ['createPet'],
        PetsAvailabilitySlowBurn: ['createPet'],
      }),
    },
    {
      name: 'a slow burn (3 times the budget) tickets and does not page',
      input: [
        ...healthyReads(hours),
        { operation: 'createPet', status: 201, perMinute: 1000, minutes: hours },
        { operation: 'createPet', status: 500, perMinute: 3, minutes: hours },
      ] satisfies Answers[],
      checks: objectiveChecks(rules, '2h', { PetsAvailabilitySlowBurn: ['createPet'] }),
    },
    {
      name: 'an error ratio within budget (half of it) and fast answers fire nothing',
      input: [
        ...healthyReads(hours),
        { operation: 'createPet', status: 201, perMinute: 2000, minutes: hours, slowShare: 0.005 },
        { operation: 'createPet', status: 503, perMinute: 1, minutes: hours },
      ] satisfies Answers[],
      checks: [...objectiveChecks(rules, '10m', {}), ...objectiveChecks(rules, '2h', {})],
    },
    {
      name: '4xx answers never count, however many and however slow',
      input: [
        ...healthyReads(60),
        { operation: 'createPet', status: 201, perMinute: 100, minutes: 60 },
        { operation: 'createPet', status: 400, perMinute: 1000, minutes: 60, slowShare: 1 },
        { operation: 'createPet', status: 429, perMinute: 1000, minutes: 60, slowShare: 1 },
        { operation: 'getPet', status: 404, perMinute: 1000, minutes: 60, slowShare: 1 },
        { operation: 'listPets', status: 401, perMinute: 1000, minutes: 60, slowShare: 1 },
      ] satisfies Answers[],
      checks: [...objectiveChecks(rules, '10m', {}), ...objectiveChecks(rules, '1h', {})],
    },
    {
      name: 'slow listPets answers page for listPets latency only',
      input: [
        { operation: 'listPets', status: 200, perMinute: 1000, minutes: 30, slowShare: 0.2 },
        { operation: 'getPet', status: 200, perMinute: 500, minutes: 30 },
        { operation: 'createPet', status: 201, perMinute: 1000, minutes: 30 },
      ] satisfies Answers[],
      checks: objectiveChecks(rules, '10m', { PetsLatencyFastBurn: ['listPets'], PetsLatencySlowBurn: ['listPets'] }),
    },
  ].map((test) => ({
    name: test.name,
    interval: '1m',
    input_series: test.input.flatMap(series),
    alert_rule_test: test.checks,
  }));
}

function operationalTests(alerts: Rule[]) {
  const instance = (name: string) => ({ job, instance: name });
  return [
    {
      name: 'an instance not ready pages; one not ready because it drains does not',
      interval: '1m',
      input_series: [
        { series: `pets_ready{job="${job}",instance="a:9464"}`, values: '0x10' },
        { series: `pets_draining{job="${job}",instance="a:9464"}`, values: '0x10' },
        { series: `pets_ready{job="${job}",instance="b:9464"}`, values: '0x10' },
        { series: `pets_draining{job="${job}",instance="b:9464"}`, values: '1x10' },
        { series: `pets_ready{job="${job}",instance="c:9464"}`, values: '1x10' },
        { series: `pets_draining{job="${job}",instance="c:9464"}`, values: '0x10' },
      ],
      alert_rule_test: [
        { eval_time: '1m', alertname: 'PetsNotReady', exp_alerts: [] },
        {
          eval_time: '3m',
          alertname: 'PetsNotReady',
          exp_alerts: [expected(alerts, 'PetsNotReady', instance('a:9464'))],
        },
      ],
    },
    {
      name: 'a saturated pool and load shedding ticket after 5 minutes',
      interval: '1m',
      input_series: [
        { series: `pets_db_pool_waiting_requests{job="${job}",instance="a:9464"}`, values: '3x10' },
        { series: `pets_db_pool_connections{job="${job}",instance="a:9464"}`, values: '10x10' },
        { series: `pets_db_pool_max_connections{job="${job}",instance="a:9464"}`, values: '10x10' },
        {
          series: `pets_load_shed_requests_total{job="${job}",instance="a:9464",reason="eventLoopDelay"}`,
          values: '0+60x10',
        },
      ],
      alert_rule_test: [
        { eval_time: '4m', alertname: 'PetsDbPoolSaturated', exp_alerts: [] },
        {
          eval_time: '7m',
          alertname: 'PetsDbPoolSaturated',
          exp_alerts: [expected(alerts, 'PetsDbPoolSaturated', instance('a:9464'), '3')],
        },
        {
          eval_time: '7m',
          alertname: 'PetsLoadShedding',
          exp_alerts: [expected(alerts, 'PetsLoadShedding', instance('a:9464'))],
        },
      ],
    },
  ];
}

function promtool(args: string[], cwd: string) {
  const run = spawnSync(promtoolBin, args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
}

/** Writes the rules (as given) and the unit tests into dir, and runs promtool test rules. */
function runUnitTests(dir: string, objectivesText: string, alertsText: string, only?: string) {
  writeFileSync(join(dir, 'objectives.yml'), objectivesText);
  writeFileSync(join(dir, 'alerts.yml'), alertsText);
  // The expectations come from the shipped rules: a broken copy is judged by what the real one says.
  const all = [
    ...unitTests(rulesOf(readFileSync(rulesPath, 'utf8'))),
    ...operationalTests(rulesOf(readFileSync(alertsPath, 'utf8'))),
  ];
  const tests = only === undefined ? all : all.filter((test) => test.name.startsWith(only));
  if (tests.length === 0) throw new Error(`no unit test named ${only}`);
  writeFileSync(
    join(dir, 'tests.yml'),
    stringify({ rule_files: ['objectives.yml', 'alerts.yml'], evaluation_interval: '1m', tests }, { lineWidth: 0 }),
  );
  return promtool(['test', 'rules', 'tests.yml'], dir);
}

const unavailable = ensurePackages((line) => process.stderr.write(`# ${line}\n`), ['prometheus']);
const asRoot = process.getuid?.() === 0;

t.test(
  'the rules pass promtool check and their unit tests; each broken matcher fails them',
  { skip: !asRoot && unavailable ? `promtool is missing: ${unavailable}` : false },
  async (t) => {
    if (unavailable) {
      t.fail(`promtool could not be installed as root: ${unavailable}`);
      return;
    }
    const dir = scratchDir('pets-promtool-');
    t.teardown(dir.remove);
    const check = promtool(['check', 'rules', rulesPath, alertsPath], repoRoot);
    t.equal(check.status, 0, `promtool check rules: ${check.output}`);

    const objectivesText = readFileSync(rulesPath, 'utf8');
    const alertsText = readFileSync(alertsPath, 'utf8');
    const passing = runUnitTests(dir.path, objectivesText, alertsText);
    t.equal(passing.status, 0, `promtool test rules passes: ${passing.output.slice(0, 4000)}`);
    if (passing.status !== 0) return;

    // Each mutation breaks one rule's matcher; the unit test named (run alone, for time) must fail for it.
    const mutations = [
      {
        what: "createPet's fast-burn alert reads another operation's short window",
        file: 'objectives' as const,
        from: 'ratio_rate5m{operation="createPet"} > (14.4',
        to: 'ratio_rate5m{operation="createpet"} > (14.4',
        fails: 'PetsAvailabilityFastBurn',
        caughtBy: 'a 5-minute burst',
      },
      {
        what: 'availability counts only 500, not 503',
        file: 'objectives' as const,
        from: /status_code=~"5\.\."/g,
        to: 'status_code="500"',
        fails: 'PetsAvailabilityFastBurn',
        caughtBy: 'a fast burn',
      },
      {
        what: 'the ticket reads a label the ratio does not have',
        file: 'objectives' as const,
        from: 'ratio_rate3d{operation="createPet"}',
        to: 'ratio_rate3d{operation="createPet",slo="availability"}',
        fails: 'PetsAvailabilitySlowBurn',
        caughtBy: 'a slow burn',
      },
      {
        what: '4xx answers are counted',
        file: 'objectives' as const,
        from: /status_code!~"4\.\."/g,
        to: 'status_code!~"4"',
        fails: 'PetsLatency',
        caughtBy: '4xx answers',
      },
      {
        what: "listPets' latency reads another bucket",
        file: 'objectives' as const,
        from: /operation="listPets",status_code!~"4\.\.",le="0\.25"/g,
        to: 'operation="listPets",status_code!~"4..",le="0.025"',
        fails: 'PetsLatencyFastBurn',
        caughtBy: 'slow listPets',
      },
      {
        what: 'PetsNotReady ignores the draining gauge of the instance',
        file: 'alerts' as const,
        from: 'pets_draining > 0',
        to: 'pets_draining{instance="elsewhere"} > 0',
        fails: 'PetsNotReady',
        caughtBy: 'an instance not ready',
      },
    ];
    for (const mutation of mutations) {
      const source = mutation.file === 'objectives' ? objectivesText : alertsText;
      const broken = source.replace(mutation.from, mutation.to);
      t.not(broken, source, `the mutation applies: ${mutation.what}`);
      const result = runUnitTests(
        dir.path,
        mutation.file === 'objectives' ? broken : objectivesText,
        mutation.file === 'alerts' ? broken : alertsText,
        mutation.caughtBy,
      );
      t.not(result.status, 0, `the unit tests fail when ${mutation.what}`);
      t.match(result.output, `alertname: ${mutation.fails}`, `and name ${mutation.fails}`);
    }
  },
);
