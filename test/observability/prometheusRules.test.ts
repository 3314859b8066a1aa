import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { ensurePackages, promtoolBin } from '../../lib/instances/index.js';
import { objectivesOf, type Objective } from '../../lib/objectives/objectives.js';
import { objectiveEvaluationInterval, objectiveRuleTests, testFile } from '../../lib/objectives/ruleTests.js';
import { objectiveRuleGroups } from '../../lib/objectives/rules.js';
import { ruleSettingsOf } from '../../lib/objectives/settings.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { scratchDir } from '../helpers/scratchSpace.js';

/**
 * The shipped rules (deploy/prometheus/objectives.yml and alerts.yml,
 * generated) pass `promtool check rules`, and their shipped unit tests
 * (deploy/prometheus/*.test.yml) pass `promtool test rules` as an operator
 * runs them. In the same single promtool run: each rule broken once (a
 * wrong matcher, window or threshold) must fail the scenario that guards
 * it, and a latency objective at an integer bound (1 s) must page whether
 * the bucket is stored as le="1" (Prometheus 2) or le="1.0" (Prometheus 3).
 * One run, not one per case: three days of history per scenario make each
 * run cost seconds, and a loaded machine many times that.
 *
 * promtool is Debian's prometheus package: installed here as root when
 * missing (.ci/run installs it first); only a non-root run without it skips.
 */

const folder = join(repoRoot, 'deploy/prometheus');
const shipped = ['objectives.test.yml', 'alerts.test.yml'].map((file) => join(folder, file));
const settings = ruleSettingsOf(process.env);
const objectives = objectivesOf(parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8')) as never);
const burning = objectives.find((objective) => objective.method !== 'GET')!.operation;
const slow = objectives.find((objective) => objective.operation !== burning)!;

interface TestFile {
  rule_files: string[];
  tests: Array<{ name: string }>;
}
const testFileOf = (path: string) => parse(readFileSync(path, 'utf8')) as TestFile;

/** promtool test rules over all files at once; each file's verdict read from the report. */
function promtool(args: string[]): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtoolBin, args, { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (status) => {
      resolve({ status, output });
    });
  });
}

/** The report of each file: "Unit Testing:  <file>" then SUCCESS or FAILED and its details. */
function verdicts(output: string): Map<string, string> {
  const byFile = new Map<string, string>();
  for (const part of output.split(/^Unit Testing: +/m).slice(1)) {
    const [file, ...rest] = part.split('\n');
    byFile.set(file!.trim(), rest.join('\n'));
  }
  return byFile;
}

interface Mutation {
  what: string;
  rules: 'objectives.yml' | 'alerts.yml';
  from: string | RegExp;
  to: string;
  /** The scenarios (name prefix) of the shipped tests that must fail for it. */
  caughtBy: string;
}

const mutations: Mutation[] = [
  {
    what: `${burning}'s fast-burn alert reads another operation's short window`,
    rules: 'objectives.yml',
    from: `ratio_rate5m{operation="${burning}"} > (14.4`,
    to: `ratio_rate5m{operation="${burning.toLowerCase()}x"} > (14.4`,
    caughtBy: 'a 10-minute burst',
  },
  {
    what: 'availability counts only 500, not 503',
    rules: 'objectives.yml',
    from: /status_code=~"5\.\."/g,
    to: 'status_code="500"',
    caughtBy: 'a fast burn',
  },
  {
    what: 'the ticket reads a label the ratio does not have',
    rules: 'objectives.yml',
    from: `ratio_rate3d{operation="${burning}"}`,
    to: `ratio_rate3d{operation="${burning}",slo="availability"}`,
    caughtBy: 'a slow burn',
  },
  {
    what: 'the ticket compares the 3-day ratio with 6 times the budget, as the page does',
    rules: 'objectives.yml',
    from: `ratio_rate3d{operation="${burning}"} > (1 *`,
    to: `ratio_rate3d{operation="${burning}"} > (0.1 *`,
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
    what: `${slow.operation}'s latency reads another bucket`,
    rules: 'objectives.yml',
    from: new RegExp(`operation="${slow.operation}",status_code!~"4\\.\\.",le="${slow.latency.thresholdSeconds}"`, 'g'),
    to: `operation="${slow.operation}",status_code!~"4..",le="0.001"`,
    caughtBy: `every ${slow.operation} answer`,
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
    what: 'PetsNotReady ignores the draining gauge of the instance',
    rules: 'alerts.yml',
    from: 'pets_draining > 0',
    to: 'pets_draining{instance="elsewhere"} > 0',
    caughtBy: 'an instance not ready',
  },
];

/** Writes into dir the test files of the broken copies and of the integer bound; returns what each must do. */
function writeCases(dir: string): Array<{ file: string; passes: boolean; what: string }> {
  const cases: Array<{ file: string; passes: boolean; what: string }> = [];
  const testOf = { 'objectives.yml': shipped[0]!, 'alerts.yml': shipped[1]! };
  mutations.forEach((mutation, index) => {
    const source = readFileSync(join(folder, mutation.rules), 'utf8');
    const broken = source.replace(mutation.from, mutation.to);
    if (broken === source) throw new Error(`the mutation does not apply: ${mutation.what}`);
    const rules = `mutation-${index}-${mutation.rules}`;
    writeFileSync(join(dir, rules), broken);
    const tests = testFileOf(testOf[mutation.rules]);
    const chosen = tests.tests.filter((test) => test.name.startsWith(mutation.caughtBy));
    if (chosen.length === 0) throw new Error(`no scenario named ${mutation.caughtBy}`);
    const file = join(dir, `mutation-${index}.test.yml`);
    writeFileSync(file, stringify({ ...tests, rule_files: [rules], tests: chosen }, { lineWidth: 0 }));
    cases.push({ file, passes: false, what: `broken: ${mutation.what}` });
  });

  // The latency objective of one operation at 1 s, a bound Prometheus 3 stores as le="1.0".
  const atOneSecond: Objective[] = objectives.map((objective) =>
    objective === slow ? { ...objective, latency: { ...objective.latency, thresholdSeconds: 1 } } : objective,
  );
  const rules = stringify({ groups: objectiveRuleGroups(atOneSecond, settings) }, { lineWidth: 0 });
  writeFileSync(join(dir, 'integer-bound.yml'), rules);
  const onlyLe = rules.replaceAll('le=~"1|1\\\\.0"', 'le="1"');
  if (onlyLe === rules) throw new Error('the rules do not match both spellings of le="1"');
  writeFileSync(join(dir, 'integer-bound-prometheus2-only.yml'), onlyLe);
  for (const spelling of ['prometheus2', 'prometheus3'] as const) {
    const tests = objectiveRuleTests(atOneSecond, settings, spelling).filter((test) =>
      test.name.startsWith(`every ${slow.operation} answer`),
    );
    // The rules that match le="1" alone must fail the buckets as Prometheus 3 stores them.
    const ruleFiles =
      spelling === 'prometheus3' ? ['integer-bound.yml', 'integer-bound-prometheus2-only.yml'] : ['integer-bound.yml'];
    for (const ruleFile of ruleFiles) {
      const passes = ruleFile === 'integer-bound.yml';
      const file = join(dir, `${ruleFile.replace('.yml', '')}-${spelling}.test.yml`);
      writeFileSync(file, stringify(testFile([ruleFile], tests, objectiveEvaluationInterval), { lineWidth: 0 }));
      cases.push({ file, passes, what: `a 1 s threshold, ${ruleFile}, buckets as ${spelling} stores them` });
    }
  }
  return cases;
}

const unavailable = ensurePackages((line) => process.stderr.write(`# ${line}\n`), ['prometheus']);
const asRoot = process.getuid?.() === 0;
t.setTimeout(20 * 60_000);

t.test(
  'the rules pass promtool check and their shipped unit tests; each broken rule fails them',
  { skip: !asRoot && unavailable ? `promtool is missing: ${unavailable}` : false, timeout: 20 * 60_000 },
  async (t) => {
    if (unavailable) {
      t.fail(`promtool could not be installed as root: ${unavailable}`);
      return;
    }
    const check = await promtool(['check', 'rules', 'objectives.yml', 'alerts.yml']);
    t.equal(check.status, 0, `promtool check rules: ${check.output}`);
    for (const file of shipped)
      t.same(
        testFileOf(file)
          .rule_files.map((rules) => join(folder, rules))
          .sort(),
        [join(folder, file.endsWith('alerts.test.yml') ? 'alerts.yml' : 'objectives.yml')],
        `${file} tests the rules beside it`,
      );

    const runbooks = ['objectives.yml', 'alerts.yml'].flatMap((file) =>
      [...readFileSync(join(folder, file), 'utf8').matchAll(/runbook_url: (\S+)/g)].map((match) => match[1]!),
    );
    t.ok(runbooks.length >= 8, 'every alert has a runbook_url');
    for (const url of runbooks) t.ok(url.startsWith(`${settings.runbookBase}#pets`), `runbook_url is absolute: ${url}`);

    const dir = scratchDir('pets-promtool-');
    t.teardown(dir.remove);
    const cases = writeCases(dir.path);
    const started = Date.now();
    const run = await promtool(['test', 'rules', ...shipped, ...cases.map((one) => one.file)]);
    t.comment(`one promtool test rules over ${shipped.length + cases.length} files: ${Date.now() - started} ms`);
    const byFile = verdicts(run.output);
    for (const file of shipped) {
      const report = byFile.get(file);
      t.match(report, /^\s*SUCCESS/, `${file} passes as shipped: ${report?.slice(0, 3000)}`);
    }
    for (const one of cases) {
      const report = byFile.get(one.file);
      t.ok(report !== undefined, `promtool reports on ${one.what}`);
      if (one.passes) t.match(report, /^\s*SUCCESS/, `passes: ${one.what}: ${report?.slice(0, 3000)}`);
      else t.match(report, /^\s*FAILED/, `fails: ${one.what}`);
    }
  },
);
