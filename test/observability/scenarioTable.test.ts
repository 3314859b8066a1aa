import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { scenarioTable, type ScenarioTest } from '../../lib/objectives/docs.js';
import { repoRoot } from '../../lib/repoRoot.js';

// docs/alerts.md's table of what pages and what tickets is written from the promtool tests that ship with the
// rules: a row says what a test checks, and every shipped scenario has one.

const firing = (severity: string) => [{ exp_labels: { severity } }];

t.test('a row: the first time each alert is checked firing, by severity, and the alerts checked quiet', async (t) => {
  const test: ScenarioTest = {
    name: 'an outage | of two hours',
    alert_rule_test: [
      { eval_time: '60m', alertname: 'Down', exp_alerts: [] },
      { eval_time: '2h', alertname: 'Down', exp_alerts: firing('page') },
      { eval_time: '65m', alertname: 'Down', exp_alerts: firing('page') },
      { eval_time: '3d', alertname: 'Slow', exp_alerts: firing('ticket') },
      { eval_time: '65m', alertname: 'Unscrapable', exp_alerts: [] },
    ],
  };
  t.equal(
    scenarioTable([test]).split('\n')[2],
    '| an outage \\| of two hours | `Down` at 65 min | `Slow` at 3 d | `Unscrapable` |',
  );
  t.throws(() =>
    scenarioTable([{ name: 'x', alert_rule_test: [{ eval_time: '5s', alertname: 'A', exp_alerts: firing('page') }] }]),
  );
});

t.test("docs/alerts.md holds the table of the shipped tests' scenarios, each one", async (t) => {
  const files = ['objectives-pages.test.yml', 'objectives.test.yml', 'alerts.test.yml'];
  const tests = files.flatMap(
    (file) =>
      (parse(readFileSync(join(repoRoot, 'deploy/prometheus', file), 'utf8')) as { tests: ScenarioTest[] }).tests,
  );
  const docs = readFileSync(join(repoRoot, 'docs/alerts.md'), 'utf8');
  t.ok(tests.length >= 20, `${tests.length} scenarios`);
  t.ok(docs.includes(scenarioTable(tests)), 'the table, as the shipped tests make it');
  for (const test of tests) t.ok(docs.includes(`| ${test.name.replace(/\|/g, '\\|')} |`), test.name);
});
