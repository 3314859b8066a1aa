import { join } from 'node:path';
import t from 'tap';
import { startAlertmanager, startBlackboxExporter, waitUntil } from '../../lib/instances/index.js';
import { prometheusConfig, probeJobOf, ruleSettingsOf } from '../../lib/objectives/settings.js';
import { repoRoot } from '../../lib/repoRoot.js';
import {
  describeNotification,
  shippedAlertmanagerConfig,
  startWebhookRecorder,
  type Notification,
} from '../helpers/webhookRecorder.js';
import {
  drillWindowScale,
  moreOutcomes,
  newLoadResult,
  runLoad,
  startTestPrometheus,
  startTestTopology,
  topologyTestOptions,
} from './harness.js';

/**
 * One database outage, one notification. The topology runs the alerting as
 * shipped: Prometheus with the rules (objectives' windows divided by
 * drillWindowScale) and the scrape configuration of deploy/prometheus/
 * prometheus.yml's probe job through a blackbox exporter with
 * deploy/blackbox/blackbox.yml, sending to an Alertmanager with
 * deploy/alertmanager/alertmanager.yml whose receivers post to a recorder.
 * Under load, the PostgreSQL primary stops until the pager has been
 * notified, then starts again: every page of the incident must have gone
 * in one notification, and no page went before the outage.
 */

const settings = ruleSettingsOf(process.env);

/** The shipped probe job, aimed at these instances through this exporter. */
function probeJob(targets: string[], exporter: string): Record<string, unknown> {
  const shipped = prometheusConfig(settings, 0, 0, []).scrape_configs.find(
    (config) => config.job_name === probeJobOf(settings.job),
  )!;
  return {
    ...shipped,
    static_configs: [{ targets }],
    relabel_configs: shipped.relabel_configs!.map((rule) =>
      rule.target_label === '__address__' ? { ...rule, replacement: exporter } : rule,
    ),
  };
}

const pages = (notifications: Notification[]) =>
  notifications.filter((notification) => notification.path === '/pager' && notification.status === 'firing');

t.test(
  'a PostgreSQL primary outage under load makes one page notification',
  topologyTestOptions(['DATABASE_STATEMENTS', 'DATABASE_READ_URL']),
  async (t) => {
    const topology = await startTestTopology(t);
    const recorder = await startWebhookRecorder();
    t.teardown(() => recorder.close());
    const alertmanager = await startAlertmanager({
      config: shippedAlertmanagerConfig(recorder.url),
      parent: topology.folder,
    });
    t.teardown(() => alertmanager.remove());
    const exporter = await startBlackboxExporter({
      configFile: join(repoRoot, 'deploy/blackbox/blackbox.yml'),
      parent: topology.folder,
    });
    t.teardown(() => exporter.remove());
    const prometheus = await startTestPrometheus(t, topology, {
      alertmanagers: [`127.0.0.1:${alertmanager.port}`],
      scrapeConfigs: [
        probeJob(
          topology.services.map((service) => `${service.origin}/healthz`),
          exporter.address,
        ),
      ],
    });

    const progress = newLoadResult();
    let stopLoad: () => void = () => undefined;
    const load = runLoad({
      baseUrl: topology.baseUrl,
      apiKey: topology.apiKey,
      workers: 6,
      writeShare: 0.5,
      until: new Promise<void>((resolve) => (stopLoad = resolve)),
      maxMs: 600_000,
      namePrefix: 'alerting',
      into: progress,
    });
    t.teardown(() => {
      stopLoad();
    });
    await moreOutcomes(progress, 300);
    // Prometheus sees the service, the probes and a ratio for createPet before the outage.
    await waitUntil(
      { what: 'every probe of /healthz succeeding and createPet recorded', timeoutMs: 60_000, intervalMs: 500 },
      async () => {
        const probes = await prometheus.query(`probe_success{job="${probeJobOf(settings.job)}"}`);
        const ratio = await prometheus.query(
          'job_operation:pets_slo_availability_errors:ratio_rate1h{operation="createPet"}',
        );
        const succeeding = probes.filter((probe) => probe.value[1] === '1').length;
        if (succeeding === topology.services.length && ratio.length > 0) return true;
        throw new Error(`probes ${JSON.stringify(probes)}, createPet ratio ${JSON.stringify(ratio)}`);
      },
    );
    t.same(recorder.notifications, [], 'nothing was sent before the outage');

    const startedAt = Date.now();
    await topology.primary.stop();
    t.comment(`the primary stopped (windows / ${drillWindowScale}); load goes on`);
    // The outage lasts until the pager is notified: Alertmanager waits group_wait (30 s) as shipped.
    await waitUntil({ what: 'a page notification', timeoutMs: 180_000, intervalMs: 250 }, async () =>
      pages(recorder.notifications).length > 0 ? true : undefined,
    );
    const notifiedAt = Date.now();
    await topology.primary.restart();
    t.comment(`the primary back ${Date.now() - startedAt} ms after it stopped`);
    // The incident is over for Alertmanager when none of the job's pages is active any more: no firing
    // notification can come for it after that.
    await waitUntil(
      { what: "the job's pages resolved in Alertmanager", timeoutMs: 180_000, intervalMs: 500 },
      async () => {
        const active = (await alertmanager.alerts()).filter(
          (alert) => alert.labels['severity'] === 'page' && alert.status.state === 'active',
        );
        return active.length === 0 ? true : undefined;
      },
    );
    stopLoad();
    await load;
    t.comment(`client statuses: ${JSON.stringify(progress.statuses)}`);
    for (const notification of recorder.notifications) t.comment(describeNotification(notification, startedAt));

    const sent = pages(recorder.notifications);
    t.equal(sent.length, 1, 'one page notification for the outage');
    const alerts = sent[0]?.alerts.map((alert) => `${alert.labels['alertname']} ${alert.labels['operation'] ?? ''}`);
    t.ok(
      alerts?.some((alert) => alert.startsWith('PetsAvailabilityFastBurn createPet')),
      `it carries createPet's availability page (${alerts?.join(', ')})`,
    );
    t.same(sent[0]?.groupLabels, { job: settings.job }, 'grouped by job: one incident');
    t.ok(notifiedAt - startedAt < 180_000, `paged ${notifiedAt - startedAt} ms after the primary stopped`);
    t.notOk(
      recorder.notifications.some((notification) =>
        notification.alerts.some((alert) => alert.labels['alertname'] === 'PetsDown'),
      ),
      'the service never looked down: the probe and the scrapes went on',
    );
  },
);
