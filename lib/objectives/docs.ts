import { withBlock } from '../generatedBlocks.js';
import type { Objective } from './objectives.js';
import { loadSheddingFacts } from './operationalAlerts.js';
import { shortHistoryFact } from './rules.js';

/** The objectives as a Markdown table, one row per operation. */
export function objectivesTable(objectives: Objective[]): string {
  const rows = objectives.map(
    (objective) =>
      `| \`${objective.operation}\` | ${objective.method} ${objective.path} | ${objective.availability} % | ` +
      `${objective.latency.percent} % within ${objective.latency.thresholdSeconds * 1000} ms |`,
  );
  return ['| Operation | Request | Availability | Latency |', '|---|---|---|---|', ...rows].join('\n');
}

/** The text with its generated `objectives` block (docs/alerts.md) holding the table; throws when it has none. */
export function withObjectivesTable(text: string, objectives: Objective[]): string {
  return withBlock(text, 'objectives', objectivesTable(objectives), 'docs/alerts.md');
}

/** The text with its generated `load-shedding` block holding the facts from the code; throws when it has none. */
export function withLoadSheddingFacts(text: string, where: string): string {
  return withBlock(text, 'load-shedding', loadSheddingFacts(), where);
}

/** The text with its generated `short-history` block (docs/alerts.md) stating when the 6-hour pair judges. */
export function withShortHistoryFact(text: string): string {
  return withBlock(text, 'short-history', shortHistoryFact(), 'docs/alerts.md');
}

/** A promtool unit test, as far as the scenario table reads it. */
export interface ScenarioTest {
  name: string;
  interval?: string;
  alert_rule_test?: Array<{
    eval_time: string;
    alertname: string;
    exp_alerts: Array<{ exp_labels?: Record<string, string> }>;
  }>;
}

/** An eval_time (`65m`, `2h`, `3d`) in minutes. */
function minutesOf(evalTime: string): number {
  const match = /^(\d+)([mhd])$/.exec(evalTime);
  if (!match) throw new Error(`a promtool eval_time this table cannot read: ${evalTime}`);
  return Number(match[1]) * { m: 1, h: 60, d: 24 * 60 }[match[2] as 'm' | 'h' | 'd'];
}

const shownTime = (minutes: number) =>
  minutes % (24 * 60) === 0 ? `${minutes / (24 * 60)} d` : minutes % 60 === 0 ? `${minutes / 60} h` : `${minutes} min`;

/**
 * One row per scenario the shipped promtool tests run: the alerts it expects to fire, by severity, each at the
 * first moment the test checks it firing (minutes from the scenario's start, as its series are written), and
 * the alerts it checks stay quiet throughout. Generated from the tests themselves, so a row is what a test
 * proves, never a claim beside it.
 */
export function scenarioTable(tests: ScenarioTest[]): string {
  const rows = tests.map((test) => {
    const checks = test.alert_rule_test ?? [];
    const firstFiring = new Map<string, { minutes: number; severity: string }>();
    for (const check of checks) {
      const firing = check.exp_alerts[0];
      if (!firing) continue;
      const minutes = minutesOf(check.eval_time);
      const known = firstFiring.get(check.alertname);
      if (!known || minutes < known.minutes)
        firstFiring.set(check.alertname, { minutes, severity: firing.exp_labels?.['severity'] ?? 'none' });
    }
    const fired = (severity: string) =>
      [...firstFiring]
        .filter(([, seen]) => seen.severity === severity)
        .map(([alert, seen]) => `\`${alert}\` at ${shownTime(seen.minutes)}`)
        .join(', ') || '–';
    const quiet = [...new Set(checks.map((check) => check.alertname))].filter((alert) => !firstFiring.has(alert));
    const name = test.name.replace(/\|/g, '\\|');
    return `| ${name} | ${fired('page')} | ${fired('ticket')} | ${quiet.map((alert) => `\`${alert}\``).join(', ') || '–'} |`;
  });
  return ['| Scenario | Pages | Tickets | Checked quiet |', '|---|---|---|---|', ...rows].join('\n');
}

/** The text with its generated `scenarios` block (docs/alerts.md) holding the table of the rules' tests. */
export function withScenarioTable(text: string, tests: ScenarioTest[]): string {
  return withBlock(text, 'scenarios', scenarioTable(tests), 'docs/alerts.md');
}
