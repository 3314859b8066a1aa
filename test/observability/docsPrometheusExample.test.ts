import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { blockContent } from '../../lib/generatedBlocks.js';
import { ensurePackages, promtoolBin } from '../../lib/instances/index.js';
import { expand, expected } from '../../lib/objectives/ruleTests.js';
import type { AlertingRule, RuleGroup } from '../../lib/objectives/rules.js';
import { repoRoot } from '../../lib/repoRoot.js';

/**
 * The Prometheus example of docs/operations.md, copied as written, against
 * the shipped rules (deploy/prometheus/): promtool loads it with its rule
 * files, and series labelled as its scrape configurations label them give
 * a quiet pager on a healthy service, a page on an outage, and no page for
 * a copy of the service scraped under another job name (staging).
 */

interface ScrapeConfig {
  job_name: string;
}
const docs = readFileSync(join(repoRoot, 'docs/operations.md'), 'utf8');
const example = blockContent(docs, 'prometheus-example') ?? '';
const config = parse(example.replace(/^```yaml\n|```\s*$/g, '')) as {
  scrape_configs: ScrapeConfig[];
  rule_files: string[];
};
const [service, probe] = config.scrape_configs.map((scrape) => scrape.job_name);

const rules = ['objectives.yml', 'alerts.yml'].flatMap(
  (file) => (parse(readFileSync(join(repoRoot, 'deploy/prometheus', file), 'utf8')) as { groups: RuleGroup[] }).groups,
);
const rule = (name: string, operation?: string) =>
  rules
    .flatMap((group) => group.rules)
    .find(
      (candidate): candidate is AlertingRule =>
        'alert' in candidate &&
        candidate.alert === name &&
        (operation === undefined || candidate.labels['operation'] === operation),
    )!;

const minutes = 90;
const steady = (value: (minute: number) => number) =>
  expand(Array.from({ length: minutes + 1 }, (_, minute) => value(minute)));
/** One instance scraped as the example labels it, answering listPets 1,000 times a minute, `failing` of them 500. */
function instance(job: string, failing: (minute: number) => number, up: (minute: number) => number = () => 1) {
  const labels = `job="${job}",instance="10.0.0.5:9464",operation="listPets",method="GET"`;
  let ok = 0;
  let failed = 0;
  const okSamples: number[] = [];
  const failedSamples: number[] = [];
  for (let minute = 0; minute <= minutes; minute++) {
    okSamples.push(ok);
    failedSamples.push(failed);
    ok += 1000 - failing(minute);
    failed += failing(minute);
  }
  return [
    { series: `up{job="${job}",instance="10.0.0.5:9464"}`, values: steady(up) },
    { series: `pets_ready{job="${job}",instance="10.0.0.5:9464"}`, values: steady(up) },
    { series: `http_server_request_duration_seconds_count{${labels},status_code="200"}`, values: expand(okSamples) },
    {
      series: `http_server_request_duration_seconds_count{${labels},status_code="500"}`,
      values: expand(failedSamples),
    },
  ];
}
const probeSeries = (job: string, success: (minute: number) => number) => ({
  series: `probe_success{job="${job}",instance="http://10.0.0.5:3000/healthz"}`,
  values: steady(success),
});
const quiet = (minute: number, names: string[]) =>
  names.map((alertname) => ({ eval_time: `${minute}m`, alertname, exp_alerts: [] }));
const pages = ['PetsDown', 'PetsNotReady', 'PetsUnscrapable', 'PetsAvailabilityFastBurn'];

const tests = [
  {
    name: 'a healthy service scraped as the example says: a quiet pager',
    interval: '1m',
    input_series: [...instance(service!, () => 0), probeSeries(probe!, () => 1)],
    alert_rule_test: [30, 60, 90].flatMap((minute) => quiet(minute, pages)),
  },
  {
    name: 'the service down (no scrape, no probe) pages PetsDown for its job',
    interval: '1m',
    input_series: [
      ...instance(
        service!,
        () => 0,
        (minute) => (minute < 30 ? 1 : 0),
      ),
      probeSeries(probe!, (minute) => (minute < 30 ? 1 : 0)),
    ],
    alert_rule_test: [
      { eval_time: '45m', alertname: 'PetsDown', exp_alerts: [expected(rule('PetsDown'), { job: service! })] },
    ],
  },
  {
    name: 'a staging copy under another job answering 20 % 5xx pages nobody; the same on the job pages',
    interval: '1m',
    input_series: [
      ...instance(service!, () => 0),
      ...instance('pet-store-staging', (minute) => (minute > 30 ? 200 : 0)),
      probeSeries(probe!, () => 1),
      ...instance(service!, (minute) => (minute > 30 ? 200 : 0)).map((one) => ({
        ...one,
        series: one.series.replace('instance="10.0.0.5:9464"', 'instance="10.0.0.6:9464"'),
      })),
    ],
    alert_rule_test: [
      {
        eval_time: '50m',
        alertname: 'PetsAvailabilityFastBurn',
        exp_alerts: [expected(rule('PetsAvailabilityFastBurn', 'listPets'), { job: service!, operation: 'listPets' })],
      },
    ],
  },
];

const unavailable = ensurePackages((line) => process.stderr.write(`# ${line}\n`), ['prometheus']);

t.test(
  'the docs example, copied as written, works with the shipped rules',
  { skip: unavailable ?? false },
  async (t) => {
    t.ok(example.startsWith('```yaml'), 'docs/operations.md has the generated example');
    const folder = mkdtempSync(join(tmpdir(), 'prometheus-example-'));
    t.teardown(() => {
      rmSync(folder, { recursive: true, force: true });
    });
    // The example names the rule files from the repository's root, as an operator's checkout has them.
    symlinkSync(join(repoRoot, 'deploy'), join(folder, 'deploy'));
    writeFileSync(join(folder, 'prometheus.yml'), stringify(config));
    const check = spawnSync(promtoolBin, ['check', 'config', 'prometheus.yml'], { cwd: folder, encoding: 'utf8' });
    t.equal(check.status, 0, `promtool check config: ${check.stdout}${check.stderr}`);
    t.match(check.stdout, /2 rule files found/, 'it loads both rule files');
    writeFileSync(
      join(folder, 'example.test.yml'),
      stringify({ rule_files: config.rule_files, evaluation_interval: '1m', tests }, { lineWidth: 0 }),
    );
    const run = spawnSync(promtoolBin, ['test', 'rules', 'example.test.yml'], { cwd: folder, encoding: 'utf8' });
    t.equal(run.status, 0, `promtool test rules: ${run.stdout}${run.stderr.slice(0, 4000)}`);
  },
);
