import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { startService, waitForReplay, type ServiceInstance } from '../../lib/instances/index.js';
import { runCheckedAsync } from '../../lib/instances/processes.js';
import { buildRelease } from '../../lib/releases/build.js';
import { previousRelease } from '../../lib/releases/record.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { migrationChanges } from '../../scripts/migrations/changes.js';
import { loadMigrations } from '../../src/db/migrations.js';
import { walkPets } from '../helpers/pages.js';
import {
  availabilitySpans,
  describeSpans,
  describeStatuses,
  drillWindowScale,
  moreOutcomes,
  newLoadResult,
  runLoad,
  startTestPrometheus,
  startTestTopology,
  topologyTestOptions,
  watchObjectiveAlerts,
  type KeyedCreate,
} from './harness.js';

/**
 * The upgrade drill, as docs/deploying.md tells an operator to run it: the
 * previous release (contract/releases.json, built from its commit) serves
 * behind HAProxy under load; this tree's migrations run live; then each old
 * instance is stopped (it drains: /readyz 503 until HAProxy takes it out)
 * and a new one takes its port. Clients, 30 % of them creating with an
 * Idempotency-Key, see no error; every acknowledged pet is there, once; no
 * key made two pets. A tree with no migration of its own since the release
 * is upgraded to its build plus an additive migration of the drill's, so
 * that a live migration and the new version's refusal of the schema before
 * it are always part of the drill.
 *
 * A private Prometheus scrapes every instance with the objectives' rules (windows
 * divided by drillWindowScale): neither a clean load run before the upgrade nor
 * the upgrade itself (every instance drained and replaced) fires an availability
 * alert; latency alerts are reported (see availabilitySpans).
 */

/** The clean load run before the upgrade: longer than the scaled 1-hour window. */
const cleanRunMs = ((60 * 60) / drillWindowScale) * 1000 + 10_000;

const release = previousRelease();
const options = topologyTestOptions(['DATABASE_STATEMENTS', 'DRAIN_DELAY_MS']);
if (!release && !options.skip) options.skip = 'no release recorded in contract/releases.json';

/** Each key sent again with its body: the answer must be the pet the first request made. */
async function replayed(baseUrl: string, apiKey: string, keyed: KeyedCreate[]): Promise<string[]> {
  const problems: string[] = [];
  for (const create of keyed) {
    const response = await fetch(`${baseUrl}/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': create.key },
      body: create.body,
      signal: AbortSignal.timeout(15_000),
    });
    const answer = (await response.json()) as { id?: number };
    if (answer.id !== create.id) problems.push(`${create.key}: pet ${create.id}, then ${response.status} ${answer.id}`);
  }
  return problems;
}

/** The new version: this build, with the drill's own migration on top when the tree adds none. */
function newVersion(t: Test): { root: string; migrations: string[] } {
  const added = migrationChanges(release!.commit).added;
  if (added.length > 0) return { root: repoRoot, migrations: added };
  const root = mkdtempSync(join(tmpdir(), 'pets-upgrade-'));
  t.teardown(() => {
    rmSync(root, { recursive: true, force: true });
  });
  for (const part of ['dist', 'migrations', 'package.json', 'openapi.yaml'])
    cpSync(join(repoRoot, part), join(root, part), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  const file = `${String(loadMigrations().length + 1).padStart(4, '0')}_upgrade_drill_note.sql`;
  writeFileSync(
    join(root, 'migrations', file),
    "SET LOCAL lock_timeout = '5s';\nALTER TABLE pets ADD COLUMN upgrade_drill_note text;\n",
  );
  return { root, migrations: [`${file} (the drill's)`] };
}

t.test('an upgrade from the previous release under load gives clients no error', options, async (t) => {
  const build = buildRelease(release!, {
    log: (line) => {
      t.comment(line);
    },
  });
  const next = newVersion(t);
  const entry = join(next.root, 'dist', 'server.js');
  const topology = await startTestTopology(t, { build: build.root });
  const prometheus = await startTestPrometheus(t, topology);
  const alerts = watchObjectiveAlerts(prometheus);
  t.teardown(() => alerts.stop());
  const clean = await runLoad({
    baseUrl: topology.baseUrl,
    apiKey: topology.apiKey,
    workers: 4,
    writeShare: 0.3,
    until: sleep(cleanRunMs),
    maxMs: cleanRunMs,
    namePrefix: 'clean',
  });
  t.comment(`clean load run: ${clean.requests} requests, ${describeStatuses(clean.statuses)}`);
  const cleanSpans = alerts.spans();
  t.comment(`objective alerts during the clean load run: ${describeSpans(cleanSpans, 0) || 'none'}`);
  t.same(clean.failures, [], 'the clean load run saw no error');
  t.same(
    availabilitySpans(cleanSpans),
    [],
    `no availability alert fired during the clean load run (windows / ${drillWindowScale})`,
  );
  const upgradeStartedAt = Date.now() - alerts.startedAt;
  const directUrl = topology.serviceEnv['DATABASE_DIRECT_URL']!;
  const replacements: ServiceInstance[] = [];
  t.teardown(async () => {
    await Promise.all(replacements.map((service) => service.stop()));
  });

  let refusedTooEarly: string | undefined;
  const steps: string[] = [];
  const progress = newLoadResult();
  const upgrading = (async () => {
    await moreOutcomes(progress, 50);
    // The new version on the old schema: it must refuse to serve, as before any upgrade.
    refusedTooEarly = await startService({
      parent: topology.folder,
      name: 'too-early',
      env: topology.serviceEnv,
      entry,
    })
      .then(async (service) => {
        await service.stop();
        return undefined;
      })
      .catch((error: unknown) => (error as Error).message);
    steps.push(
      `migrated live: ${(
        await runCheckedAsync(process.execPath, [join(next.root, 'dist', 'cli', 'migrate.js')], {
          cwd: next.root,
          env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', DATABASE_URL: directUrl, LOG_LEVEL: 'warn' },
        })
      ).trim()}`,
    );
    await moreOutcomes(progress, 50);
    for (const old of topology.services) {
      const startedAt = Date.now();
      await old.stop();
      replacements.push(
        await startService({
          parent: topology.folder,
          name: `${old.name}-new`,
          port: old.port,
          env: old.env,
          entry,
          // As the topology's own instances (lib/instances/topology.ts).
          readyTimeoutMs: 60_000,
        }),
      );
      await topology.haproxy.waitForAllUp();
      steps.push(`${old.name} replaced in ${Date.now() - startedAt} ms`);
    }
    await moreOutcomes(progress, 50);
  })();
  const load = await runLoad({
    into: progress,
    baseUrl: topology.baseUrl,
    apiKey: topology.apiKey,
    workers: 6,
    writeShare: 0.3,
    until: upgrading,
    maxMs: 240_000,
    namePrefix: 'upgrade',
    idempotencyKeys: true,
  });
  await upgrading;
  // The scaled 5-minute window and a few scrapes: what the last replacement caused has been evaluated.
  await sleep(((5 * 60) / drillWindowScale) * 1000 + 3_000);
  await alerts.stop();
  const upgradeSpans = alerts.spans().filter((span) => span.firingAt >= upgradeStartedAt);
  t.comment(`objective alerts during the upgrade: ${describeSpans(upgradeSpans, upgradeStartedAt) || 'none'}`);
  t.same(
    availabilitySpans(upgradeSpans),
    [],
    `no availability alert fired during the upgrade (windows / ${drillWindowScale})`,
  );
  t.comment(
    `from ${release!.version} (${release!.commit.slice(0, 12)}), new migrations: ${next.migrations.join(', ')}`,
  );
  t.comment(`${steps.join('; ')}; ${load.requests} requests, ${describeStatuses(load.statuses)}`);

  // Refused to start: the process ended, saying why (not merely unready).
  t.match(
    refusedTooEarly,
    /the process \(pid \d+\) ended[\s\S]*needs version/,
    'the new version refused to start on the schema that was behind',
  );
  t.match(steps[0], /^migrated live: Applied /, 'the new migrations ran while the previous release served');
  t.equal(replacements.length, topology.services.length, 'every old instance was replaced by a new one');
  t.ok(load.requests > 200, `clients kept sending (${load.requests} requests)`);
  t.same(load.failures, [], 'no client saw an error: every answer a 200 or 201');
  const balancerLog = readFileSync(topology.haproxy.logFile, 'utf8');
  for (const old of topology.services) {
    const downs = balancerLog.split('\n').filter((line) => line.includes(`pets_instances/${old.name} is DOWN`));
    t.ok(
      downs.length > 0 && downs.every((line) => /Layer7 wrong status, code: 503/.test(line)),
      `the old ${old.name} left the rotation because /readyz said 503 while it still served`,
    );
  }

  await waitForReplay(topology.primary, topology.replica);
  const listed = await walkPets(topology.baseUrl, topology.apiKey, 100);
  const ids = new Set(listed.map((pet) => pet.id));
  t.same(
    load.created.filter((pet) => !ids.has(pet.id)),
    [],
    `all ${load.created.length} acknowledged pets are present`,
  );
  const ours = listed.filter((pet) => pet.name.startsWith('upgrade-'));
  t.equal(ours.length, load.created.length, 'no create made a pet that was not acknowledged once');
  t.same(await replayed(topology.baseUrl, topology.apiKey, load.keyed), [], 'every key replays the one pet it made');
});
