import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import t from 'tap';
import { generateApiKey } from '../../src/auth/keys.js';
import { parse } from 'yaml';
import { ClusterTally } from '../../src/observability/clusterMetrics.js';
import { startServer } from '../helpers/server.js';
import { migratedDataDir } from '../helpers/databases.js';

const silent = { write: () => true } as unknown as NodeJS.WritableStream;

/** Metric names a PromQL expression uses: every identifier with one of the service's prefixes (not a recorded one). */
function metricNames(expression: string): string[] {
  return expression.replace(recordedName, '').match(/\b(?:pets|http_server|nodejs|process)_[a-z0-9_]+/g) ?? [];
}

/** A recording rule's name (level:metric:operations), e.g. operation:pets_slo_latency_errors:ratio_rate1h. */
const recordedName = /\b[a-z_]+:[a-z0-9_]+:[a-z0-9_]+/g;

/** The metric families of a scrape, with the series names a histogram adds. */
function scrapedNames(scrape: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name! + suffix);
  }
  return names;
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboard.json', 'utf8')) as {
    title: string;
    panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  };
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
}

const ruleFiles = ['deploy/prometheus/alerts.yml', 'deploy/prometheus/objectives.yml'];

function rules(): Array<{ record?: string; expr: string }> {
  return ruleFiles.flatMap((file) =>
    (
      parse(readFileSync(file, 'utf8')) as { groups: Array<{ rules: Array<{ record?: string; expr: string }> }> }
    ).groups.flatMap((group) => group.rules),
  );
}

t.test('metrics are served on their own listener, never on the API port', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const key = generateApiKey();
  const server = await startServer(
    {
      DATA_DIR: dir.path,
      PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'silent',
      BOOTSTRAP_API_KEY: key,
    },
    silent,
  );
  t.teardown(() => server.shutdown('test'));
  t.ok(server.metricsAddress, 'a metrics listener is started');
  await fetch(`${server.address}/v1/pets`, { headers: { authorization: `Bearer ${key}` } });

  t.equal((await fetch(`${server.address}/metrics`)).status, 404, 'the API port does not serve metrics');
  const response = await fetch(`${server.metricsAddress!}/metrics`);
  t.equal(response.status, 200);
  t.match(response.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const scrape = await response.text();
  t.match(
    scrape,
    /http_server_request_duration_seconds_count\{operation="listPets",method="GET",status_code="200"\} 1/,
  );
  t.equal((await fetch(`${server.metricsAddress!}/other`)).status, 404);
  const loaded = Object.keys(createRequire(import.meta.url).cache);
  t.ok(
    loaded.some((file) => file.includes('/node_modules/prom-client/')),
    'the module cache shows CommonJS packages',
  );
  t.notOk(
    // (@opentelemetry/api, the no-op API, is prom-client's own dependency.)
    loaded.some((file) => /\/(@opentelemetry\/(sdk-|instrumentation)|@fastify\/otel\/)/.test(file)),
    'without OTEL_* variables, no OpenTelemetry module is loaded (start-up time)',
  );

  // A cluster primary's scrape adds its own gauges about its workers to the workers' metrics.
  const primaryScrape = await new ClusterTally().aggregate(new Set(), { live: 0, unresponsive: 0 }).metrics();

  t.test('the Grafana dashboard and the alert rules use only metrics the service exports', async (t) => {
    const names = scrapedNames(scrape + primaryScrape);
    const dashboard = dashboardExpressions();
    const ruleList = rules();
    const alerts = ruleList.map((rule) => rule.expr);
    const recorded = new Set(ruleList.flatMap((rule) => (rule.record ? [rule.record] : [])));
    t.ok(dashboard.length >= 6, 'the dashboard has panels with queries');
    t.ok(alerts.length >= 4, 'there are alert rules');
    for (const expression of [...dashboard, ...alerts]) {
      const used = metricNames(expression);
      const usedRecorded = expression.match(recordedName) ?? [];
      // Prometheus's own series of each scrape (up) and the blackbox exporter's of each probe.
      const scrapes = expression.match(/\b(?:up|probe_success)\{/g) ?? [];
      t.ok(used.length + usedRecorded.length + scrapes.length > 0, `uses a metric: ${expression}`);
      for (const name of used) t.ok(names.has(name), `${name} is exported (${expression})`);
      for (const name of usedRecorded) t.ok(recorded.has(name), `${name} is recorded by ${ruleFiles.join(' or ')}`);
    }
  });

  t.test(
    "every metric of the service's own is read by a dashboard panel or a rule: none is a blind spot",
    async (t) => {
      const read = new Set([...dashboardExpressions(), ...rules().map((rule) => rule.expr)].flatMap(metricNames));
      const own = [...scrapedNames(scrape + primaryScrape)].filter((name) => name.startsWith('pets_'));
      t.ok(own.includes('pets_abandoned_requests_total'), 'the scrape lists counters never increased');
      for (const name of own) t.ok(read.has(name), `${name} is on the dashboard or in a rule`);
    },
  );
});

t.test('METRICS_PORT=off starts no metrics listener', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const server = await startServer(
    {
      DATA_DIR: dir.path,
      PORT: '0',
      METRICS_PORT: 'off',
      LOG_LEVEL: 'silent',
      BOOTSTRAP_API_KEY: generateApiKey(),
    },
    silent,
  );
  t.teardown(() => server.shutdown('test'));
  t.equal(server.metricsAddress, undefined);
});
