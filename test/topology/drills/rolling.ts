import { readFileSync } from 'node:fs';
import type { Test } from 'tap';
import { waitForReplay, type Topology } from '../../../lib/instances/index.js';
import { walkPets } from '../../helpers/pages.js';
import { describeStatuses, moreOutcomes, newLoadResult, runLoad } from '../harness.js';

/**
 * A rolling restart of all three instances (SIGTERM, wait for the exit,
 * start again, wait until the balancer has it back) while clients read and
 * write: the drain (/readyz 503 for DRAIN_DELAY_MS while still serving)
 * lets HAProxy take each instance out before it stops accepting, so no
 * client sees any error, POSTs without Idempotency-Key included.
 */

export const rollingDrillNeeds = ['DATABASE_STATEMENTS', 'DRAIN_DELAY_MS'] as const;

/** Before any drill that takes an instance down otherwise: every DOWN of the balancer's log must be a drain. */
export async function rollingDrill(t: Test, topology: Topology): Promise<void> {
  const restarted: string[] = [];
  const progress = newLoadResult();
  const rolling = (async () => {
    await moreOutcomes(progress, 50);
    for (const service of topology.services) {
      const startedAt = Date.now();
      await service.stop();
      await service.restart();
      await topology.haproxy.waitForAllUp();
      restarted.push(`${service.name} in ${Date.now() - startedAt} ms`);
    }
    await moreOutcomes(progress, 50);
  })();
  const load = await runLoad({
    into: progress,
    baseUrl: topology.baseUrl,
    apiKey: topology.apiKey,
    workers: 6,
    writeShare: 0.3,
    until: rolling,
    maxMs: 150_000,
    namePrefix: 'rolling',
  });
  await rolling;
  t.comment(`restarted ${restarted.join(', ')}; ${load.requests} requests, ${describeStatuses(load.statuses)}`);

  t.equal(restarted.length, 3, 'every instance was restarted');
  t.ok(load.requests > 200, `clients kept sending (${load.requests} requests)`);
  t.same(load.failures, [], 'no client saw an error: every answer a 200 or 201');
  // How the balancer saw each instance leave: a drain shows as /readyz
  // answering 503 (Layer7) while the instance still accepted connections; an
  // instance that stopped accepting first shows as a Layer4 problem.
  const balancerLog = readFileSync(topology.haproxy.logFile, 'utf8');
  for (const service of topology.services) {
    const downs = balancerLog.split('\n').filter((line) => line.includes(`pets_instances/${service.name} is DOWN`));
    t.comment(downs.join('\n'));
    t.ok(
      downs.length > 0 && downs.every((line) => /Layer7 wrong status, code: 503/.test(line)),
      `${service.name} left the rotation because /readyz said 503 while it still served`,
    );
  }

  await waitForReplay(topology.primary, topology.replica);
  const listed = await walkPets(topology.baseUrl, topology.apiKey, 50);
  const ids = new Set(listed.map((pet) => pet.id));
  t.equal(ids.size, listed.length, 'paging lists each pet once');
  t.same(
    load.created.filter((pet) => !ids.has(pet.id)),
    [],
    `all ${load.created.length} acknowledged pets are present`,
  );
}
