import type { Test } from 'tap';
import { waitForReplay, waitUntil, type Topology } from '../../../lib/instances/index.js';
import { walkPets } from '../../helpers/pages.js';
import { describeStatuses, newLoadResult, runLoad } from '../harness.js';

/**
 * One instance killed with SIGKILL while clients write through the balancer:
 * only requests that were in flight on it may fail, every pet whose creation
 * was acknowledged is there afterwards, and paging lists each pet once.
 */

const workers = 8;

export const killDrillNeeds = ['DATABASE_STATEMENTS'] as const;

/** Ends with every instance UP again. */
export async function killDrill(t: Test, topology: Topology): Promise<void> {
  const victim = topology.services[1]!;
  const progress = newLoadResult();
  const acknowledged = (count: number) =>
    waitUntil({ what: `${count} pets acknowledged`, timeoutMs: 60_000 }, async () =>
      progress.created.length >= count ? true : undefined,
    );
  const killing = (async () => {
    await acknowledged(20);
    await victim.kill();
    // The load goes on until the balancer has marked the instance down (inter 1s x fall 2) and
    // writes have gone on without it.
    await waitUntil({ what: `the balancer marking ${victim.name} down`, timeoutMs: 60_000 }, async () =>
      /^DOWN/.test((await topology.haproxy.servers()).find((server) => server.name === victim.name)?.status ?? '')
        ? true
        : undefined,
    );
    await acknowledged(progress.created.length + 20);
  })();
  const load = await runLoad({
    into: progress,
    baseUrl: topology.baseUrl,
    apiKey: topology.apiKey,
    workers,
    writeShare: 0.7,
    until: killing,
    maxMs: 60_000,
    namePrefix: 'kill',
  });
  await killing;
  t.comment(`${load.requests} requests, ${describeStatuses(load.statuses)}; ${load.created.length} pets acknowledged`);
  if (load.failures.length > 0) t.comment(`failed: ${load.failures.join(' | ')}`);

  const failed = load.requests - (load.statuses['200'] ?? 0) - (load.statuses['201'] ?? 0);
  t.ok(load.created.length >= 40, 'writes went on');
  t.ok(
    failed <= workers,
    `only requests in flight on the killed instance may fail: ${failed} failed, at most ${workers} were in flight`,
  );
  t.ok(
    load.failures.every((failure) => failure.startsWith('POST')),
    'no GET failed (the balancer retries a GET the instance died on, and a refused connection for any request)',
  );

  const servers = await topology.haproxy.servers();
  t.match(
    servers.find((server) => server.name === victim.name)?.status ?? '',
    /^DOWN/,
    'the balancer marked the killed instance down',
  );

  // Reads may go to the replica: let it catch up before checking what is there.
  await waitForReplay(topology.primary, topology.replica);
  const listed = await walkPets(topology.baseUrl, topology.apiKey, 50);
  const ids = listed.map((pet) => pet.id);
  t.equal(new Set(ids).size, ids.length, `paging listed ${ids.length} pets, none twice`);
  t.same(
    ids,
    [...ids].sort((a, b) => a - b),
    'in id order',
  );
  const byId = new Map(listed.map((pet) => [pet.id, pet]));
  const lost = load.created.filter((pet) => byId.get(pet.id)?.name !== pet.name);
  t.same(lost, [], `all ${load.created.length} acknowledged pets are present, as acknowledged`);

  await t.test('the killed instance comes back', async (t) => {
    await victim.restart();
    await waitUntil({ what: 'the balancer seeing every instance up', timeoutMs: 30_000 }, async () =>
      (await topology.haproxy.servers()).every((server) => server.status === 'UP') ? true : undefined,
    );
    t.pass('all three instances UP again');
  });
}
