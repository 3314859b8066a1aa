import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { ensurePackages } from '../../lib/instances/index.js';
import { objectivesOf, type Objective } from '../../lib/objectives/objectives.js';
import { objectivePageTests, testFile } from '../../lib/objectives/ruleTests.js';
import { objectiveRuleGroups } from '../../lib/objectives/rules.js';
import { ruleSettingsOf } from '../../lib/objectives/settings.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { pageTestFile, ruleTestFileOf, rulesFolder, testRulesEach } from '../helpers/promtool.js';
import { scratchDir } from '../helpers/scratchSpace.js';

/**
 * The shipped rule tests (deploy/prometheus/*.test.yml) can fail: each rule
 * broken once (a wrong matcher, window or threshold) must fail the scenario
 * that guards it, and a latency objective at an integer bound (1 s) must
 * page whether the bucket is stored as le="1" (Prometheus 2) or le="1.0"
 * (Prometheus 3). Each case carries three days of history, so the cases run
 * on every core at once (testRulesEach). Part of `npm run test:system -- rules`, not of npm test.
 *
 * promtool is Debian's prometheus package: installed here as root when
 * missing (.ci/run installs it first); only a non-root run without it skips.
 */

const settings = ruleSettingsOf(process.env);
const objectives = objectivesOf(parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8')) as never);
const burning = objectives.find((objective) => objective.method !== 'GET')!.operation;
const other = objectives.find((objective) => objective.operation !== burning)!;

interface Mutation {
  what: string;
  rules: 'objectives.yml' | 'alerts.yml';
  from: string | RegExp;
  to: string;
  /** The scenarios (part of their name) of the shipped tests that must fail for it. */
  caughtBy: string;
}

const job = `job="${settings.job}"`;
const mutations: Mutation[] = [
  {
    what: `${burning}'s fast-burn alert reads another operation's short window`,
    rules: 'objectives.yml',
    from: `ratio_rate5m{${job},operation="${burning}"} > (14.4`,
    to: `ratio_rate5m{${job},operation="${burning.toLowerCase()}x"} > (14.4`,
    caughtBy: 'a burst (8 minutes',
  },
  {
    what: `${other.operation}'s fast-burn alert reads ${burning}'s short window`,
    rules: 'objectives.yml',
    from: `ratio_rate5m{${job},operation="${other.operation}"} > (14.4`,
    to: `ratio_rate5m{${job},operation="${burning}"} > (14.4`,
    caughtBy: 'on each operation in turn',
  },
  {
    what: 'availability counts only 500, not 503',
    rules: 'objectives.yml',
    from: /status_code=~"5\.\."/g,
    to: 'status_code="500"',
    caughtBy: 'a burst (8 minutes',
  },
  {
    what: 'the ticket reads a label the ratio does not have',
    rules: 'objectives.yml',
    from: `ratio_rate3d{${job},operation="${burning}"}`,
    to: `ratio_rate3d{${job},operation="${burning}",slo="availability"}`,
    caughtBy: 'a slow burn',
  },
  {
    what: 'the ticket compares the 3-day ratio with a tenth of the budget',
    rules: 'objectives.yml',
    from: `ratio_rate3d{${job},operation="${burning}"} > (1 *`,
    to: `ratio_rate3d{${job},operation="${burning}"} > (0.1 *`,
    caughtBy: 'a slow burn',
  },
  {
    what: '4xx answers are counted',
    rules: 'objectives.yml',
    from: /status_code!~"4\.\."/g,
    to: 'status_code!~"4"',
    caughtBy: '4xx answers',
  },
  {
    what: `${other.operation}'s latency reads another bucket`,
    rules: 'objectives.yml',
    from: new RegExp(
      `operation="${other.operation}",status_code!~"4\\.\\.",le="${other.latency.thresholdSeconds}"`,
      'g',
    ),
    to: `operation="${other.operation}",status_code!~"4..",le="0.001"`,
    caughtBy: `every ${other.operation} answer`,
  },
  {
    what: `${burning}'s page has no floor on the 6-hour window`,
    rules: 'objectives.yml',
    from: new RegExp(`(availability_bad_answers:increase6h\\{${job},operation="${burning}"\\}) >= \\d+`),
    to: '$1 >= 0',
    caughtBy: 'one 500 every 30 minutes',
  },
  {
    what: `${burning}'s page has no floor on the 1-hour window`,
    rules: 'objectives.yml',
    from: new RegExp(`(availability_bad_answers:increase1h\\{${job},operation="${burning}"\\}) >= \\d+`),
    to: '$1 >= 0',
    caughtBy: 'half of them failing',
  },
  {
    what: 'the low-traffic page has no minimum count of failures',
    rules: 'objectives.yml',
    from: /(availability_bad_answers:increase1h\{[^}]*\}) >= 3$/gm,
    to: '$1 >= 1',
    caughtBy: 'the only answer in half an hour failing',
  },
  {
    what: 'the rare-failure condition pages a single failure (no minimum count)',
    rules: 'objectives.yml',
    from: /\) >= 2$/gm,
    to: ') >= 1',
    caughtBy: 'failure at 1 an hour pages nobody',
  },
  {
    what: 'the rare-failure condition counts over an hour, too short for two failures an hour apart',
    rules: 'objectives.yml',
    from: /\[150m\]/g,
    to: '[60m]',
    caughtBy: 'at 1 request an hour, every',
  },
  {
    what: 'the rare-failure condition ignores the answers served',
    rules: 'objectives.yml',
    from: /\) >= 0\.9$/gm,
    to: ') >= 0',
    caughtBy: 'one 500 every 30 minutes',
  },
  {
    what: 'the read probe page ignores /healthz (PetsDown paged twice)',
    rules: 'alerts.yml',
    from: /(probe_success\{job="[^"]*-reads"[^}]*\}\) == 0)\n\s+and on \(\)\n\s+max\(probe_success\{[^}]*\}\) == 1/,
    to: '$1',
    caughtBy: 'pages once: PetsDown, not PetsReadProbeFailing',
  },
  {
    what: 'the read probe page fires when one instance fails its probe',
    rules: 'alerts.yml',
    from: 'max by (operation) (probe_success',
    to: 'min by (operation) (probe_success',
    caughtBy: 'one instance failing it pages nobody',
  },
  {
    what: "the read probe page reads another job's probes",
    rules: 'alerts.yml',
    from: /-reads"/g,
    to: '-read"',
    caughtBy: 'every probe of listPets failing',
  },
  {
    what: 'refused callers page without the good answers falling',
    rules: 'alerts.yml',
    from: '< 0.1 * sum',
    to: '< 10 * sum',
    caughtBy: 'one client with a bad key',
  },
  {
    what: 'the not-serving share ignores the probes',
    rules: 'alerts.yml',
    from: /(probe_success\{[^}]*\}) == 1, "host"/g,
    to: '$1 == 2, "host"',
    caughtBy: 'not a page (down, not serving)',
  },
  {
    what: 'the 6-hour pair judges a job with less than 6 hours of history',
    rules: 'objectives.yml',
    from: /\n\s+and on \(job, operation\)\n\s+group by \(job, operation\) \(present_over_time\([^\n]*\)\)/g,
    to: '',
    caughtBy: 'a 60 s failover (every write failing) pages nobody',
  },
  {
    what: 'the 6-hour pair waits for history no job has (a week)',
    rules: 'objectives.yml',
    from: /\[15m\] offset 345m\)/g,
    to: '[15m] offset 7d)',
    caughtBy: 'through the 6 h and 30 min pair alone',
  },
  {
    what: 'the pages fire as soon as both windows burn (no for)',
    rules: 'objectives.yml',
    from: /\n\s+for: 6m/g,
    to: '',
    caughtBy: 'a 1-minute failover',
  },
  {
    what: 'the absence page waits 3 hours',
    rules: 'alerts.yml',
    from: 'for: 3m',
    to: 'for: 3h',
    caughtBy: 'a two-hour outage',
  },
  {
    what: 'the absence page fires when any target is down',
    rules: 'alerts.yml',
    from: 'max by (job) (up{',
    to: 'min by (job) (up{',
    caughtBy: 'a job gone',
  },
  {
    what: 'the absence page ignores the probe of /healthz',
    rules: 'alerts.yml',
    from: /unless on \(\)\n\s+max\(probe_success\{[^}]*\}\) == 1/,
    to: '',
    caughtBy: 'every scrape failing while the probe',
  },
  {
    what: 'the readiness alerts ignore the draining gauge of the instance',
    rules: 'alerts.yml',
    from: new RegExp(`pets_draining\\{${job}\\} > 0`, 'g'),
    to: `pets_draining{${job},instance="elsewhere"} > 0`,
    caughtBy: 'instances draining or shedding',
  },
  {
    what: 'the readiness alerts ignore the shedding gauge of the instance',
    rules: 'alerts.yml',
    from: new RegExp(` or pets_load_shedding\\{${job}\\} > 0\\)`, 'g'),
    to: ')',
    caughtBy: 'instances draining or shedding',
  },
  {
    what: 'PetsNotReady pages for one instance of three',
    rules: 'alerts.yml',
    from: '>= 0.5',
    to: '>= 0.3',
    caughtBy: 'one instance of three not ready',
  },
  {
    what: 'PetsNotReady pages at once',
    rules: 'alerts.yml',
    from: /(>= 0\.5\n\s+for:) 3m/,
    to: '$1 0s',
    caughtBy: 'a 1-minute failover (all three',
  },
  {
    what: 'one instance not ready tickets only after 15 hours',
    rules: 'alerts.yml',
    from: 'for: 15m',
    to: 'for: 15h',
    caughtBy: 'one instance of three not ready',
  },
];

/** The shipped test files (deploy/prometheus/*.test.yml) of a rule file. */
const testFilesOf = (rules: string) =>
  readdirSync(rulesFolder)
    .filter((file) => file.endsWith('.test.yml'))
    .filter((file) => ruleTestFileOf(join(rulesFolder, file)).rule_files.includes(rules));

interface Case {
  file: string;
  passes: boolean;
  what: string;
}

/** Writes into dir the rules broken by each mutation and the shipped scenarios that guard them. */
function mutationCases(dir: string): Case[] {
  return mutations.flatMap((mutation, index) => {
    const source = readFileSync(join(rulesFolder, mutation.rules), 'utf8');
    const broken = source.replace(mutation.from, mutation.to);
    if (broken === source) throw new Error(`the mutation does not apply: ${mutation.what}`);
    const rules = `mutation-${index}-${mutation.rules}`;
    writeFileSync(join(dir, rules), broken);
    const cases = testFilesOf(mutation.rules).flatMap((testFileName) => {
      const tests = ruleTestFileOf(join(rulesFolder, testFileName));
      const chosen = tests.tests.filter((test) => test.name.includes(mutation.caughtBy));
      if (chosen.length === 0) return [];
      const file = join(dir, `mutation-${index}-${testFileName}`);
      writeFileSync(file, stringify({ ...tests, rule_files: [rules], tests: chosen }, { lineWidth: 0 }));
      return [{ file, passes: false, what: `broken: ${mutation.what}` }];
    });
    if (cases.length === 0) throw new Error(`no scenario named ${mutation.caughtBy}`);
    return cases;
  });
}

/** The latency objective of one operation at 1 s, a bound Prometheus 3 stores as le="1.0". */
function integerBoundCases(dir: string): Case[] {
  const atOneSecond: Objective[] = objectives.map((objective) =>
    objective === other ? { ...objective, latency: { ...objective.latency, thresholdSeconds: 1 } } : objective,
  );
  const rules = stringify({ groups: objectiveRuleGroups(atOneSecond, settings) }, { lineWidth: 0 });
  writeFileSync(join(dir, 'integer-bound.yml'), rules);
  const onlyLe = rules.replaceAll('le=~"1|1\\\\.0"', 'le="1"');
  if (onlyLe === rules) throw new Error('the rules do not match both spellings of le="1"');
  writeFileSync(join(dir, 'integer-bound-prometheus2-only.yml'), onlyLe);
  const cases: Case[] = [];
  for (const spelling of ['prometheus2', 'prometheus3'] as const) {
    const tests = objectivePageTests(atOneSecond, settings, spelling).filter((test) =>
      test.name.startsWith(`every ${other.operation} answer`),
    );
    // The rules that match le="1" alone must fail the buckets as Prometheus 3 stores them.
    const ruleFiles =
      spelling === 'prometheus3' ? ['integer-bound.yml', 'integer-bound-prometheus2-only.yml'] : ['integer-bound.yml'];
    for (const ruleFile of ruleFiles) {
      const file = join(dir, `${ruleFile.replace('.yml', '')}-${spelling}.test.yml`);
      writeFileSync(file, stringify(testFile([ruleFile], tests), { lineWidth: 0 }));
      const passes = ruleFile === 'integer-bound.yml';
      cases.push({ file, passes, what: `a 1 s threshold, ${ruleFile}, buckets as ${spelling} stores them` });
    }
  }
  return cases;
}

const unavailable = ensurePackages((line) => process.stderr.write(`# ${line}\n`), ['prometheus']);
const asRoot = process.getuid?.() === 0;

t.test(
  'each broken rule fails the shipped scenario that guards it; a 1 s bound pages in either spelling',
  { skip: !asRoot && unavailable ? `promtool is missing: ${unavailable}` : false, timeout: 30 * 60_000 },
  async (t) => {
    if (unavailable) {
      t.fail(`promtool could not be installed as root: ${unavailable}`);
      return;
    }
    const dir = scratchDir('pets-promtool-');
    t.teardown(dir.remove);
    // The pages' shipped tests as an operator runs them (npm test runs the others: they take seconds).
    const shippedPages = { file: join(rulesFolder, pageTestFile), passes: true, what: `${pageTestFile} as shipped` };
    const cases = [shippedPages, ...mutationCases(dir.path), ...integerBoundCases(dir.path)];
    const started = Date.now();
    const byFile = await testRulesEach(cases.map((one) => one.file));
    t.comment(`promtool test rules over ${cases.length} files, on every core: ${Date.now() - started} ms`);
    for (const one of cases) {
      const { report, output = '' } = byFile.get(one.file) ?? {};
      t.ok(report !== undefined, `promtool reports on ${one.what}`);
      if (one.passes) t.match(report, /^\s*SUCCESS/, `passes: ${one.what}: ${output.slice(0, 3000)}`);
      else t.notMatch(report, /SUCCESS/, `fails: ${one.what}`);
    }
  },
);
