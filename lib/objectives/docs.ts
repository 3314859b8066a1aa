import type { Objective } from './objectives.js';

/** Where docs/alerts.md carries the generated objectives table. */
export const tableMarkers = { begin: '<!-- objectives -->', end: '<!-- /objectives -->' } as const;

/** The objectives as a Markdown table, one row per operation. */
export function objectivesTable(objectives: Objective[]): string {
  const rows = objectives.map(
    (objective) =>
      `| \`${objective.operation}\` | ${objective.method} ${objective.path} | ${objective.availability} % | ` +
      `${objective.latency.percent} % within ${objective.latency.thresholdSeconds * 1000} ms |`,
  );
  return ['| Operation | Request | Availability | Latency |', '|---|---|---|---|', ...rows].join('\n');
}

/** The text with the table between its markers replaced; throws when the markers are missing. */
export function withObjectivesTable(text: string, objectives: Objective[]): string {
  const begin = text.indexOf(tableMarkers.begin);
  const end = text.indexOf(tableMarkers.end);
  if (begin === -1 || end < begin) throw new Error(`no ${tableMarkers.begin} ... ${tableMarkers.end} markers`);
  return `${text.slice(0, begin + tableMarkers.begin.length)}\n${objectivesTable(objectives)}\n${text.slice(end)}`;
}
