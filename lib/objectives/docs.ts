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
