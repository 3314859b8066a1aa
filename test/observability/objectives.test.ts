import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { shedReasons } from '../../src/http/arrival/loadShedding.js';
import { objectivesOf } from '../../lib/objectives/objectives.js';
import { loadSheddingFacts, operationalRuleGroup, sheddingLimitText } from '../../lib/objectives/operationalAlerts.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { durationDays, retentionFlag } from '../../lib/instances/prometheus.js';
import {
  bucketMatcher,
  budgetOf,
  duration,
  minimumRetentionDays,
  objectiveRuleGroups,
} from '../../lib/objectives/rules.js';
import { ruleSettingsOf } from '../../lib/objectives/settings.js';

const operation = (slo: unknown) => ({
  paths: { '/pets': { get: { operationId: 'listPets', ...(slo === undefined ? {} : { 'x-slo': slo }) } } },
});
const slo = { availability: 99.9, latency: { thresholdSeconds: 0.25, percent: 99 } };

t.test('every operation must state objectives the histogram can measure', async (t) => {
  t.throws(() => objectivesOf(operation(undefined)), /listPets has no x-slo/);
  t.throws(
    () => objectivesOf(operation({ ...slo, latency: { thresholdSeconds: 0.3, percent: 99 } })),
    /listPets: x-slo\.latency\.thresholdSeconds must be a bucket .*0\.25, 0\.5/,
  );
  t.throws(() => objectivesOf(operation({ ...slo, availability: 100 })), /x-slo\.availability must be a number/);
  t.same(objectivesOf(operation(slo)), [
    { operation: 'listPets', method: 'GET', path: '/pets', ...slo, minimumBadAnswersPerHour: 10 },
  ]);
  t.throws(
    () => objectivesOf(operation({ ...slo, minimumBadAnswersPerHour: 0.5 })),
    /listPets: x-slo\.minimumBadAnswersPerHour must be a whole number from 1/,
  );
  t.equal(budgetOf(objectivesOf(operation(slo))[0]!, 'availability'), 0.001);
  t.equal(budgetOf(objectivesOf(operation(slo))[0]!, 'latency'), 0.01);
});

t.test('a page needs the floor of bad answers its x-slo sets (10 an hour by default) in its long window', async (t) => {
  const rulesOf = (extra: object) =>
    JSON.stringify(
      objectiveRuleGroups(objectivesOf(operation({ ...slo, ...extra })), {
        runbookBase: 'https://example.com/a',
        job: 'pets',
      }),
    );
  const byDefault = rulesOf({});
  t.match(byDefault, /availability_bad_answers:increase1h\{job=\\"pets\\",operation=\\"listPets\\"\} >= 10\b/);
  t.match(byDefault, /availability_bad_answers:increase6h\{job=\\"pets\\",operation=\\"listPets\\"\} >= 60\b/);
  t.match(byDefault, /latency_bad_answers:increase1h\{job=\\"pets\\",operation=\\"listPets\\"\} >= 10\b/);
  const overridden = rulesOf({ minimumBadAnswersPerHour: 3 });
  t.match(overridden, /availability_bad_answers:increase1h\{job=\\"pets\\",operation=\\"listPets\\"\} >= 3\b/);
  t.match(overridden, /availability_bad_answers:increase6h\{job=\\"pets\\",operation=\\"listPets\\"\} >= 18\b/);
  t.notMatch(byDefault, /increase3d/, 'the ticket has no floor: below it, a ticket at most');
});

t.test('a drill scales every window, and nothing else', async (t) => {
  t.equal(duration(5 * 60, 1), '5m');
  t.equal(duration(3 * 24 * 3600, 1), '3d');
  t.equal(duration(5 * 60, 60), '5s');
  t.equal(duration(3600, 60), '1m');
  t.equal(duration(3 * 24 * 3600, 60), '72m');
  const text = JSON.stringify(
    objectiveRuleGroups(objectivesOf(operation(slo)), {
      scale: 60,
      runbookBase: 'https://example.com/alerts',
      job: 'pets',
    }),
  );
  const ranges = new Set(text.match(/\[\w+\]/g));
  t.same([...ranges].sort(), ['[12h]', '[150s]', '[15s]', '[1m]', '[30s]', '[5s]', '[6m]', '[72m]', '[90s]'].sort());
  t.match(text, /\[15s\] offset 345s\)/, "the 6-hour pair's wait for history scales too");
  t.match(text, /> \(14\.4 \* 0\.001\)/, 'the burn rates stay');
});

t.test('an integer bucket bound matches as Prometheus 2 and 3 store it; any other its one spelling', async (t) => {
  t.equal(bucketMatcher(1), 'le=~"1|1\\\\.0"');
  t.equal(bucketMatcher(10), 'le=~"10|10\\\\.0"');
  t.equal(bucketMatcher(0.25), 'le="0.25"');
});

t.test('every runbook_url is absolute: RUNBOOK_BASE_URL, else the repository of package.json', async (t) => {
  const fromPackage = ruleSettingsOf({});
  t.match(fromPackage.runbookBase, /^https:\/\/[^/]+\/.+\/blob\/main\/docs\/alerts\.md$/);
  t.equal(fromPackage.job, 'pet-store-service');
  const set = ruleSettingsOf({ RUNBOOK_BASE_URL: 'https://wiki.example.com/pets/alerts', PROMETHEUS_JOB: 'pets' });
  t.same(set, { runbookBase: 'https://wiki.example.com/pets/alerts', job: 'pets' });
  t.throws(() => ruleSettingsOf({ RUNBOOK_BASE_URL: 'docs/alerts.md' }), /absolute http\(s\) URL/);
  const urls = JSON.stringify(objectiveRuleGroups(objectivesOf(operation(slo)), set)).match(/"runbook_url":"[^"]+"/g);
  t.same(urls, [
    '"runbook_url":"https://wiki.example.com/pets/alerts#petsavailabilityfastburn"',
    '"runbook_url":"https://wiki.example.com/pets/alerts#petsavailabilityslowburn"',
    '"runbook_url":"https://wiki.example.com/pets/alerts#petsoperationfailing"',
    '"runbook_url":"https://wiki.example.com/pets/alerts#petslatencyfastburn"',
    '"runbook_url":"https://wiki.example.com/pets/alerts#petslatencyslowburn"',
  ]);
});

t.test('the drills run Prometheus with the retention the 30-day window needs', async (t) => {
  t.equal(durationDays('35d'), 35);
  t.equal(durationDays('5w'), 35);
  t.equal(durationDays('1d12h'), 1.5);
  t.equal(durationDays(''), 0);
  const [, value] = retentionFlag.split('=');
  t.match(retentionFlag, /^--storage\.tsdb\.retention\.time=/);
  t.ok(durationDays(value!) >= minimumRetentionDays, `${retentionFlag} keeps at least ${minimumRetentionDays} days`);
  t.ok(minimumRetentionDays > 30, 'more than the 30-day window');
});

t.test("the dashboard's 5xx ratio divides by the answers the objectives count (4xx aside)", async (t) => {
  const dashboard = JSON.parse(readFileSync(join(repoRoot, 'deploy/grafana/dashboard.json'), 'utf8')) as {
    panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  };
  const ratios = dashboard.panels.filter((panel) => /\bratio\b/i.test(panel.title));
  t.ok(ratios.length > 0, 'the dashboard has a 5xx ratio');
  for (const panel of ratios)
    for (const { expr } of panel.targets ?? []) {
      const [, denominator = ''] = expr.split(' / ');
      t.match(denominator, /status_code!~"4\.\."/, `${panel.title}: ${expr}`);
    }
});

t.test('the load-shedding facts of the docs and alerts are the code’s own', async (t) => {
  for (const file of ['docs/alerts.md', 'docs/operations.md', 'deploy/prometheus/alerts.yml']) {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    t.ok(text.includes(file.endsWith('.md') ? loadSheddingFacts() : sheddingLimitText()), `${file} states the limit`);
    const reasons = new Set(text.match(/`(eventLoop\w+|heap\w+)`/g));
    t.same([...reasons], file.endsWith('.md') ? shedReasons.map((reason) => `\`${reason}\``) : [], `${file}: reasons`);
    t.notMatch(text, /LOAD_SHEDDING_/, `${file} names no setting that does not exist`);
  }
});

t.test('every rule selects the job, and the extra selector when one is set (PROMETHEUS_SELECTOR)', async (t) => {
  const settings = ruleSettingsOf({ PROMETHEUS_JOB: 'pets', PROMETHEUS_SELECTOR: 'namespace="prod"' });
  t.equal(settings.selector, 'namespace="prod"');
  t.throws(() => ruleSettingsOf({ PROMETHEUS_SELECTOR: 'job="x"' }), /without job/);
  t.throws(() => ruleSettingsOf({ PROMETHEUS_SELECTOR: 'prod' }), /PromQL matchers/);
  const text = JSON.stringify([
    objectiveRuleGroups(objectivesOf(operation(slo)), settings),
    operationalRuleGroup(settings),
  ]).replace(/\\"/g, '"');
  // Every raw series the rules read; the recorded ones (a colon in the name) keep the job alone.
  const selectors = [...text.matchAll(/\b(?:http_server|pets_|up\b|probe_success)[a-z_]*\{([^}]*)\}/g)].map(
    (m) => m[1]!,
  );
  t.ok(selectors.length > 20);
  for (const selector of selectors) t.match(selector, /job="pets(-healthz|-reads)?",namespace="prod"/, selector);
});
