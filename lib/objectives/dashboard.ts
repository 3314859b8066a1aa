import type { Objective } from './objectives.js';
import type { RuleSettings } from './settings.js';
import { budgetOf, counted, objectiveKinds, ratioName, windows, type ObjectiveKind } from './rules.js';

/**
 * The objectives' Grafana panels, generated into deploy/grafana/dashboard.json
 * below the hand-made ones: for each objective kind, the error budget left
 * over 30 days and the burn rate over 1 h, one series per operation. Panels
 * with an id from firstPanelId on are the generated ones; the rest of the
 * dashboard is kept as it is, but for the 5xx ratio's expression, which
 * takes the objectives' denominator (errorRatioExpression).
 */
export const firstPanelId = 100;

type Panel = Record<string, unknown> & { id: number; gridPos: { x: number; y: number; w: number; h: number } };

const datasource = { type: 'prometheus', uid: '${datasource}' };

function target(expr: string, legendFormat: string, refId: string) {
  return { datasource, expr, legendFormat, refId };
}

const refId = (index: number) => String.fromCharCode(65 + index);

function budgetLeft(objectives: Objective[], kind: ObjectiveKind, id: number, y: number): Panel {
  return {
    id,
    type: 'timeseries',
    title: `${kind === 'availability' ? 'Availability' : 'Latency'} error budget left (30 days)`,
    description:
      'Share of the 30-day error budget not spent yet (1 = untouched, 0 = spent, below 0 = objective missed), ' +
      'per operation; the objectives are x-slo in openapi.yaml (docs/alerts.md).',
    datasource,
    gridPos: { x: 0, y, w: 12, h: 8 },
    fieldConfig: { defaults: { unit: 'percentunit', min: -1, max: 1 }, overrides: [] },
    targets: objectives.map((objective, index) =>
      target(
        `1 - ${ratioName(kind, windows['30d'])}{job=~"$job",operation="${objective.operation}"} / ${budgetOf(objective, kind)}`,
        '{{operation}} ({{job}})',
        refId(index),
      ),
    ),
  };
}

function burnRate(objectives: Objective[], kind: ObjectiveKind, id: number, y: number): Panel {
  return {
    id,
    type: 'timeseries',
    title: `${kind === 'availability' ? 'Availability' : 'Latency'} burn rate (1 h)`,
    description:
      'How many times faster than the budget allows each operation fails its objective over the last hour: ' +
      '1 spends the budget in exactly 30 days; 14.4 (with the 5-minute rate too) pages.',
    datasource,
    gridPos: { x: 12, y, w: 12, h: 8 },
    fieldConfig: { defaults: { unit: 'none', min: 0 }, overrides: [] },
    targets: objectives.map((objective, index) =>
      target(
        `${ratioName(kind, windows['1h'])}{job=~"$job",operation="${objective.operation}"} / ${budgetOf(objective, kind)}`,
        '{{operation}} ({{job}})',
        refId(index),
      ),
    ),
  };
}

/** The hand-made panel whose ratio the generator keeps on the objectives' denominator. */
export const errorRatioPanelTitle = '5xx ratio (4xx aside, as the objectives count)';

/**
 * The 5xx share of the answers the availability objectives count: 4xx are
 * in neither part, so a flood of 401s does not make the ratio look better.
 */
export function errorRatioExpression(): string {
  const rate = (matcher: string) =>
    `sum(rate(http_server_request_duration_seconds_count{job=~"$job",${matcher}}[$__rate_interval]))`;
  return `${rate('status_code=~"5.."')} / ${rate(counted)}`;
}

function withErrorRatio(panel: Panel): Panel {
  if (panel['title'] !== errorRatioPanelTitle && panel['title'] !== '5xx ratio') return panel;
  const targets = panel['targets'] as Array<Record<string, unknown>>;
  return { ...panel, title: errorRatioPanelTitle, targets: [{ ...targets[0], expr: errorRatioExpression() }] };
}

interface Variable {
  name: string;
  [key: string]: unknown;
}
interface Dashboard {
  panels: Panel[];
  templating?: { list: Variable[] };
}

/**
 * The `job` variable every panel selects by: it offers the jobs that match
 * the rules' selector (PROMETHEUS_SELECTOR) and opens on the rules' job
 * (PROMETHEUS_JOB), so the dashboard shows what the alerts watch.
 */
function withJobVariable(dashboard: Dashboard, settings: RuleSettings): Dashboard {
  const query = settings.selector
    ? `label_values(http_server_request_duration_seconds_count{${settings.selector}}, job)`
    : 'label_values(http_server_request_duration_seconds_count, job)';
  const list = (dashboard.templating?.list ?? []).map((variable) =>
    variable.name === 'job'
      ? {
          ...variable,
          query: { query, refId: 'job' },
          definition: query,
          current: { text: settings.job, value: [settings.job] },
        }
      : variable,
  );
  return { ...dashboard, templating: { ...dashboard.templating, list } };
}

/** The dashboard with its job variable set from the rules' settings and its generated panels made anew. */
export function withObjectivePanels(dashboard: Dashboard, objectives: Objective[], settings: RuleSettings): Dashboard {
  return withGeneratedPanels(withJobVariable(dashboard, settings), objectives);
}

/** The dashboard with its generated panels replaced by the ones the objectives make now. */
function withGeneratedPanels(dashboard: Dashboard, objectives: Objective[]): Dashboard {
  const kept = dashboard.panels.filter((panel) => panel.id < firstPanelId).map(withErrorRatio);
  let y = Math.max(0, ...kept.map((panel) => panel.gridPos.y + panel.gridPos.h));
  const generated: Panel[] = [
    {
      id: firstPanelId,
      type: 'row',
      title: 'Objectives (generated from x-slo in openapi.yaml by npm run generate)',
      collapsed: false,
      gridPos: { x: 0, y, w: 24, h: 1 },
      panels: [],
    },
  ];
  y += 1;
  objectiveKinds.forEach((kind, index) => {
    generated.push(budgetLeft(objectives, kind, firstPanelId + 1 + index * 2, y));
    generated.push(burnRate(objectives, kind, firstPanelId + 2 + index * 2, y));
    y += 8;
  });
  return { ...dashboard, panels: [...kept, ...generated] };
}
