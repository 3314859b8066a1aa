import type { Test } from 'tap';
import { waitForReplay, waitUntil, type Topology } from '../../../lib/instances/index.js';
import type { Pet } from '../../helpers/pages.js';

/**
 * The replica stopped under a running topology: reads (listPets, getPet)
 * fall back to the primary with no client-visible error, every instance's
 * /readyz says why, and the instances stay in the balancer's rotation
 * (they can serve everything from the primary).
 */

export const replicaDrillNeeds = ['DATABASE_STATEMENTS', 'DATABASE_READ_URL'] as const;

/** The first drill on a topology: the listing it reads must show its pets in the first 100. */
export async function replicaDrill(t: Test, topology: Topology): Promise<void> {
  const auth = { authorization: `Bearer ${topology.apiKey}` };
  const created: Pet[] = [];
  for (let index = 0; index < 5; index += 1) {
    const response = await fetch(`${topology.baseUrl}/pets`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `replica-${index}`, categoryId: 2 }),
    });
    t.equal(response.status, 201, 'created before the replica stops');
    created.push((await response.json()) as Pet);
  }
  await waitForReplay(topology.primary, topology.replica);

  await topology.replica.stop();

  /** Reads through the balancer (so every instance answers some); each non-200 is described. */
  const readAll = async (rounds: number): Promise<string[]> => {
    const problems: string[] = [];
    for (let round = 0; round < rounds; round += 1) {
      for (const url of [
        `${topology.baseUrl}/pets?limit=100`,
        `${topology.baseUrl}/pets/${created[round % created.length]!.id}`,
      ]) {
        const response = await fetch(url, { headers: auth });
        const text = await response.text();
        if (response.status !== 200) problems.push(`${url}: ${response.status} ${text.slice(0, 200)}`);
        else if (url.includes('limit=') && !created.every((pet) => text.includes(`"id":${pet.id},`)))
          problems.push(`${url}: the list lacks pets created before`);
      }
    }
    return problems;
  };

  t.same(await readAll(15), [], 'every read right after the replica stopped answered 200 with the data');

  for (const service of topology.services) {
    const said = await waitUntil(
      { what: `${service.name}'s /readyz saying the replica is not usable`, timeoutMs: 30_000 },
      async () => {
        const response = await fetch(`${service.origin}/readyz`);
        const text = await response.text();
        // It names the replica and what is wrong with it (not just that one is configured).
        return /replica/i.test(text) &&
          /unreachable|refused|lagging|behind|\bdown\b|terminat|shut|not streaming/i.test(text)
          ? { status: response.status, text }
          : undefined;
      },
    );
    t.equal(said.status, 200, `${service.name} stays ready: it serves reads from the primary`);
    t.comment(`${service.name} /readyz: ${said.text}`);
  }
  t.same(await readAll(15), [], 'reads still answer 200 once the instances know');
  t.ok(
    (await topology.haproxy.servers()).every((server) => server.status === 'UP'),
    'no instance left the rotation',
  );

  await t.test('the replica back: reads go on without error', async (t) => {
    await topology.replica.restart();
    t.same(await readAll(10), [], 'every read answered 200');
  });
}
