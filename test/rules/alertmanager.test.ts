import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import {
  amtoolBin,
  blackboxBin,
  ensurePackages,
  startAlertmanager,
  startBlackboxExporter,
  waitUntil,
} from '../../lib/instances/index.js';
import { probedReadsOf, probeKeyFile } from '../../lib/objectives/probes.js';
import type { AlertingRule, RuleGroup } from '../../lib/objectives/rules.js';
import { ruleSettingsOf } from '../../lib/objectives/settings.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import { startTestApp } from '../helpers/app.js';
import { rulesFolder } from '../helpers/promtool.js';
import { scratchDir } from '../helpers/scratchSpace.js';
import {
  alertmanagerConfigFile,
  describeNotification,
  shippedAlertmanagerConfig,
  startWebhookRecorder,
} from '../helpers/webhookRecorder.js';

/**
 * The shipped Alertmanager configuration (deploy/alertmanager/alertmanager.yml)
 * passes `amtool check-config`; `amtool config routes test` sends every
 * alert of the shipped rules to the pager when it pages and to the tickets
 * when it does not; a live Alertmanager with it sends one notification for
 * the pages of one job, apart from the tickets, and PetsDown inhibits the
 * job's other alerts. The shipped blackbox exporter configuration
 * (deploy/blackbox/blackbox.yml) passes its check and its probe tells a
 * live /healthz from a port that does not answer.
 *
 * amtool and Alertmanager are Debian's prometheus-alertmanager, the exporter
 * prometheus-blackbox-exporter: installed here as root when missing
 * (.ci/run installs them first); only a non-root run without them skips.
 */

const job = ruleSettingsOf(process.env).job;
const packages = ['prometheus-alertmanager', 'prometheus-blackbox-exporter'];
const unavailable = ensurePackages((line) => process.stderr.write(`# ${line}\n`), packages);
const skip = process.getuid?.() !== 0 && unavailable ? `missing: ${unavailable}` : false;

const amtool = (args: string[]) => spawnSync(amtoolBin, args, { encoding: 'utf8' });

/** Every alerting rule shipped in deploy/prometheus/. */
function shippedAlerts(): AlertingRule[] {
  return ['objectives.yml', 'alerts.yml'].flatMap((file) =>
    (parse(readFileSync(join(rulesFolder, file), 'utf8')) as { groups: RuleGroup[] }).groups.flatMap((group) =>
      group.rules.filter((rule): rule is AlertingRule => 'alert' in rule),
    ),
  );
}

t.test('amtool: the configuration is valid, and pages and tickets go to different receivers', { skip }, async (t) => {
  if (unavailable) return void t.fail(unavailable);
  const check = amtool(['check-config', alertmanagerConfigFile]);
  t.equal(check.status, 0, `amtool check-config: ${check.stdout}${check.stderr}`);
  const alerts = shippedAlerts();
  t.ok(alerts.length >= 10, `${alerts.length} shipped alerts`);
  const severities = new Set(alerts.map((alert) => alert.labels['severity']));
  t.same([...severities].sort(), ['page', 'ticket'], 'every shipped alert is a page or a ticket');
  const cases: Array<{ labels: Record<string, string> }> = [
    ...alerts.map((alert) => ({ labels: { alertname: alert.alert, job, ...alert.labels } })),
    { labels: { alertname: 'SomethingElse', job } },
  ];
  for (const { labels } of cases) {
    const receiver = labels['severity'] === 'page' ? 'pager' : 'tickets';
    const args = Object.entries(labels).map(([name, value]) => `${name}=${value}`);
    const routed = amtool([
      'config',
      'routes',
      'test',
      `--config.file=${alertmanagerConfigFile}`,
      `--verify.receivers=${receiver}`,
      ...args,
    ]);
    t.equal(routed.status, 0, `${args.join(' ')} -> ${receiver} (${routed.stdout.trim()})`);
  }
});

t.test('a live Alertmanager: one notification per incident, tickets apart, PetsDown inhibits', { skip }, async (t) => {
  if (unavailable) return void t.fail(unavailable);
  const dir = scratchDir('pets-alertmanager-');
  t.teardown(dir.remove);
  const recorder = await startWebhookRecorder();
  t.teardown(() => recorder.close());
  // Grouping and inhibition as shipped; the waits shortened (a test cannot wait 30 s per group).
  const alertmanager = await startAlertmanager({
    config: shippedAlertmanagerConfig(recorder.url, { group_wait: '2s', group_interval: '1m' }),
    parent: dir.path,
  });
  t.teardown(() => alertmanager.remove());
  const started = Date.now();
  const alert = (alertname: string, severity: string, extra: Record<string, string> = {}) => ({
    labels: { alertname, severity, job, ...extra },
  });
  // A database outage: three operations burn, the instances are not ready (each its own ticket), and
  // two instances' pools queue.
  await alertmanager.post([
    ...['listPets', 'createPet', 'getPet'].map((operation) =>
      alert('PetsAvailabilityFastBurn', 'page', { operation, slo: 'availability' }),
    ),
    alert('PetsNotReady', 'page'),
    ...['a:9464', 'b:9464'].flatMap((instance) => [
      alert('PetsInstanceNotReady', 'ticket', { instance }),
      alert('PetsDbPoolSaturated', 'ticket', { instance }),
    ]),
  ]);
  const sent = await waitUntil(
    { what: 'a page and a ticket', timeoutMs: 30_000, logFile: alertmanager.logFile },
    async () =>
      recorder.notifications.some((n) => n.path === '/pager') &&
      recorder.notifications.some((n) => n.path === '/tickets')
        ? recorder.notifications
        : undefined,
  );
  for (const notification of sent) t.comment(describeNotification(notification, started));
  const pages = sent.filter((notification) => notification.path === '/pager');
  t.equal(pages.length, 1, 'one page for the incident');
  t.equal(pages[0]?.alerts.length, 4, 'carrying the four page alerts of the job');
  t.same(
    sent.filter((n) => n.path === '/tickets').flatMap((n) => n.alerts.map((a) => a.labels['alertname'])),
    ['PetsDbPoolSaturated', 'PetsDbPoolSaturated'],
    "the tickets go apart, never to the pager; one per kind, the instances' readiness tickets held by PetsNotReady",
  );
  t.same(
    (await alertmanager.alerts())
      .filter((one) => one.labels['alertname'] === 'PetsInstanceNotReady')
      .map((one) => one.status.state),
    ['suppressed', 'suppressed'],
    'PetsNotReady inhibits the per-instance readiness tickets',
  );
  // Minutes into the outage the probes of the reads fail too: the incident is paged already.
  await alertmanager.post([alert('PetsReadProbeFailing', 'page', { operation: 'listPets' })]);
  const lateProbe = await waitUntil({ what: 'the late read probe page held', timeoutMs: 30_000 }, async () => {
    const held = (await alertmanager.alerts()).filter((one) => one.labels['alertname'] === 'PetsReadProbeFailing');
    return held.length > 0 && held.every((one) => one.status.inhibitedBy.length > 0) ? held : undefined;
  });
  t.equal(lateProbe.length, 1, 'PetsNotReady inhibits the read probe page that follows it');

  await alertmanager.post([
    alert('PetsDown', 'page'),
    // Its rule takes the service's job (not the probes'), so that PetsDown holds it back.
    alert('PetsReadProbeFailing', 'page', { operation: 'listPets' }),
    alert('PetsAvailabilityFastBurn', 'page', { job: 'elsewhere', operation: 'getPet' }),
  ]);
  const inhibited = await waitUntil({ what: "PetsDown inhibiting its job's alerts", timeoutMs: 30_000 }, async () => {
    const held = await alertmanager.alerts();
    const suppressed = held.filter((one) => one.status.inhibitedBy.length > 0);
    return suppressed.length >= 9 ? held : undefined;
  });
  const state = (name: string, jobName: string) =>
    inhibited
      .filter((one) => one.labels['alertname'] === name && one.labels['job'] === jobName)
      .map((one) => one.status.state);
  t.same(state('PetsAvailabilityFastBurn', job), ['suppressed', 'suppressed', 'suppressed'], 'the burns are inhibited');
  t.same(state('PetsNotReady', job), ['suppressed'], 'and readiness');
  t.same(state('PetsReadProbeFailing', job), ['suppressed'], 'and the failing read probe: one outage, one page');
  t.same(state('PetsDbPoolSaturated', job), ['suppressed', 'suppressed'], 'and the tickets');
  t.same(state('PetsDown', job), ['active'], 'PetsDown is sent');
  t.same(state('PetsAvailabilityFastBurn', 'elsewhere'), ['active'], "PetsDown inhibits nothing of another job's");
});

t.test(
  'the blackbox exporter: the shipped modules pass their check and probe /healthz and the reads',
  { skip },
  async (t) => {
    if (unavailable) return void t.fail(unavailable);
    const configFile = join(repoRoot, 'deploy/blackbox/blackbox.yml');
    const check = spawnSync(blackboxBin, ['--config.check', `--config.file=${configFile}`], { encoding: 'utf8' });
    t.equal(check.status, 0, `${blackboxBin} --config.check: ${check.stderr}`);
    t.notMatch(check.stderr, /deprecated/, 'no deprecated setting');
    const dir = scratchDir('pets-blackbox-');
    t.teardown(dir.remove);
    const { app, db } = await startTestApp(t, 'embedded');
    // The prober's key as docs/operations.md makes it: the probed reads' scopes alone, in a file of its own.
    const reads = probedReadsOf(parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8')) as never);
    t.ok(reads.length > 0, `probed reads: ${reads.map((read) => read.operation).join(', ')}`);
    const key = generateApiKey();
    await insertApiKey(db, toStoredKey('blackbox-prober', key), { scopes: reads.flatMap((read) => read.scopes) });
    const keyFile = join(dir.path, 'probe.key');
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
    const localConfig = join(dir.path, 'blackbox.yml');
    const shipped = readFileSync(configFile, 'utf8');
    t.ok(shipped.includes(probeKeyFile), 'the shipped modules read the documented key file');
    writeFileSync(localConfig, shipped.replaceAll(probeKeyFile, keyFile));
    const exporter = await startBlackboxExporter({ configFile: localConfig, parent: dir.path });
    t.teardown(() => exporter.remove());
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const probe = async (target: string, module = 'healthz') => {
      const url = `http://${exporter.address}/probe?module=${module}&target=${encodeURIComponent(target)}`;
      const text = await (await fetch(url)).text();
      return Number(/^probe_success (\S+)$/m.exec(text)?.[1]);
    };
    t.equal(await probe(`${address}/healthz`), 1, 'the live /healthz succeeds');
    t.equal(await probe(`${address}/readyz`), 0, 'another answer (not {"status":"ok"}) fails');
    for (const read of reads) {
      t.equal(await probe(`${address}${read.path}`, read.operation), 1, `${read.operation} with the read key succeeds`);
      t.equal(
        await probe(`${address}/healthz/nothing`, read.operation),
        0,
        `${read.operation}'s module wants its status`,
      );
    }
    writeFileSync(keyFile, 'pets_not-a-key\n');
    for (const read of reads)
      t.equal(await probe(`${address}${read.path}`, read.operation), 0, `${read.operation} with a refused key fails`);
    await app.close();
    t.equal(await probe(`${address}/healthz`), 0, 'a port that does not answer fails');
  },
);
