import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { startService, waitForReplay, type ServiceInstance } from '../../lib/instances/index.js';
import { runCheckedAsync } from '../../lib/instances/processes.js';
import { buildRelease } from '../../lib/releases/build.js';
import { previousRelease } from '../../lib/releases/record.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { migrationChanges } from '../../scripts/migrations/changes.js';
import { walkPets } from '../helpers/pages.js';
import { describeStatuses, runLoad, startTestTopology, topologyTestOptions, type KeyedCreate } from './harness.js';

/**
 * The upgrade drill, as docs/deploying.md tells an operator to run it: the
 * previous release (contract/releases.json, built from its commit) serves
 * behind HAProxy under load; this tree's migrations run live; then each old
 * instance is stopped (it drains: /readyz 503 until HAProxy takes it out)
 * and a new one takes its port. Clients, 30 % of them creating with an
 * Idempotency-Key, see no error; every acknowledged pet is there, once; no
 * key made two pets.
 */

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

t.test('an upgrade from the previous release under load gives clients no error', options, async (t) => {
  const build = buildRelease(release!, {
    log: (line) => {
      t.comment(line);
    },
  });
  const topology = await startTestTopology(t, { build: build.root });
  const added = migrationChanges(release!.commit).added;
  const directUrl = topology.serviceEnv['DATABASE_DIRECT_URL']!;
  const replacements: ServiceInstance[] = [];
  t.teardown(async () => {
    for (const service of replacements) await service.stop();
  });

  let refusedTooEarly: string | undefined;
  const steps: string[] = [];
  const upgrading = (async () => {
    await sleep(1_000);
    if (added.length > 0) {
      // The new version on the old schema: it must refuse to serve, as before any upgrade.
      refusedTooEarly = await startService({ parent: topology.folder, name: 'too-early', env: topology.serviceEnv })
        .then(async (service) => {
          await service.stop();
          return undefined;
        })
        .catch((error: unknown) => (error as Error).message);
    }
    steps.push(
      `migrated live: ${(
        await runCheckedAsync(process.execPath, [join(repoRoot, 'dist', 'cli', 'migrate.js')], {
          cwd: repoRoot,
          env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', DATABASE_URL: directUrl, LOG_LEVEL: 'warn' },
        })
      ).trim()}`,
    );
    await sleep(1_000);
    for (const old of topology.services) {
      const startedAt = Date.now();
      await old.stop();
      replacements.push(
        await startService({ parent: topology.folder, name: `${old.name}-new`, port: old.port, env: old.env }),
      );
      await topology.haproxy.waitForAllUp();
      steps.push(`${old.name} replaced in ${Date.now() - startedAt} ms`);
    }
    await sleep(1_000);
  })();
  const load = await runLoad({
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
  t.comment(
    `from ${release!.version} (${release!.commit.slice(0, 12)}), new migrations: ${added.join(', ') || 'none'}`,
  );
  t.comment(`${steps.join('; ')}; ${load.requests} requests, ${describeStatuses(load.statuses)}`);

  if (added.length > 0)
    t.match(
      refusedTooEarly,
      /needs version|schema is at version/,
      'the new version refused the schema that was behind',
    );
  else t.comment('no migration since the release: the new version has no schema to find behind');
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
