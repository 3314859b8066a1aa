import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import t, { type Test } from 'tap';
import { waitUntil, type FailoverNode, type Topology } from '../../lib/instances/index.js';
import { pageForSeconds } from '../../lib/objectives/rules.js';
import { databaseNodes } from '../../scripts/topology/databaseNodes.js';
import {
  drillWindowScale,
  availabilitySpans,
  heldRuns,
  scaledAlertRule,
  startTestPrometheus,
  startTestTopology,
  topologyTestOptions,
  watchObjectiveAlerts,
} from './harness.js';

/**
 * Losing the primary, on the failover topology (pg_auto_failover, three
 * synchronous data nodes, HAProxy routing writes to the node that takes
 * them): clients write through the balancer with Idempotency-Keys and retry
 * every 503 as a client would (same key, after Retry-After), readers list
 * and get. The primary node is killed with SIGKILL, its database and its
 * manager; then every acknowledged pet must be on the new primary, no key
 * may have made two pets, no answer may be a 500, reads must go on, and
 * writes must be back within 15 s. The old primary rejoins as a standby.
 * Then a planned switchover, with its own (short) write gap.
 *
 * A private Prometheus scrapes every instance with the objectives' rules, their
 * windows, floor and hold as the drill scales them (drillWindowScale). The
 * failover's 503s (about 3 s of them once the ride-through gives up, some 10-30
 * answers) sit right at the page's guards: 10 bad answers in the scaled hour and
 * a condition held for the scaled 6 minutes (6 s), which the 5 s short window
 * keeps for about 5 s after the last 503. Whether it pages therefore depends on
 * how the 503s fall, by design (docs/alerts.md, "Short failovers"). So the drill
 * asserts the design, not a machine's speed: the slow-burn ticket (no floor, no
 * hold) fires for createPet; the page fires if and only if its condition, read
 * back from Prometheus, held for the hold (reported, not asserted, within the
 * 2 s that evaluation and sampling blur), never sooner than the hold after the
 * condition began, and resolves once writes are back.
 */

/** How long the page may take to resolve after writes are back: the 30-minute window, scaled, and slack. */
const resolveBoundMs = ((30 * 60) / drillWindowScale) * 1000 + 30_000;
const createPetPage = 'PetsAvailabilityFastBurn createPet';
const createPetTicket = 'PetsAvailabilitySlowBurn createPet';
/** Rule evaluation and scrapes each second, the watch every 500 ms, the condition read per second. */
const holdBlurMs = 2_000;

/** The bound the issue sets: writes are back within this long of the kill. */
const failoverBoundMs = 15_000;
/**
 * A planned switchover stops writes for about 2 s in the engine (the old
 * primary stopped until the new one takes writes; bench/switchoverGap.ts),
 * and the service's transactions wait that out (src/db/rideThrough.ts), so a
 * client sees a gap of about that (docs/scaling.md, "Losing the primary").
 * What is asserted is that the service did wait it out (its instances log
 * each transaction or read tried again); the time bound is the failover's, wide
 * enough for a loaded machine, and the measured gap is reported.
 */
const switchoverBoundMs = failoverBoundMs;
const writers = 6;
const readers = 2;

interface Acknowledged {
  id: number;
  name: string;
}

interface Traffic {
  acknowledged: Acknowledged[];
  /** Completion time of each acknowledged write, with when its last attempt was sent. */
  acks: Array<{ sentAt: number; at: number }>;
  statuses: Record<string, number>;
  readStatuses: Record<string, number>;
  /** When each successful read completed. */
  readsAt: number[];
  /** The first failed reads and writes: when, and what came back. */
  failures: Array<{ at: number; what: string }>;
  unexpected: string[];
  stop(): Promise<void>;
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

const count = (into: Record<string, number>, key: string) => (into[key] = (into[key] ?? 0) + 1);

/** Writers (each pet one key, retried on 503 or a lost answer) and readers, until stopped. */
function startTraffic(topology: Topology, prefix: string): Traffic {
  const auth = { authorization: `Bearer ${topology.apiKey}` };
  const traffic: Traffic = {
    acknowledged: [],
    acks: [],
    statuses: {},
    readStatuses: {},
    readsAt: [],
    failures: [],
    unexpected: [],
    stop: async () => undefined,
  };
  let running = true;
  const deadline = Date.now() + 180_000;
  const failed = (what: string) => {
    if (traffic.failures.length < 12) traffic.failures.push({ at: Date.now(), what: what.slice(0, 160) });
  };
  const note = (line: string) => {
    if (traffic.unexpected.length < 20) traffic.unexpected.push(line);
  };

  const writer = async (index: number) => {
    for (let sequence = 0; running && Date.now() < deadline; sequence += 1) {
      const name = `${prefix}-${index}-${sequence}`;
      const key = randomUUID();
      // One logical pet: the same key and body until it is acknowledged (or the drill ends).
      for (let attempt = 0; Date.now() < deadline; attempt += 1) {
        const sentAt = Date.now();
        let retryAfterMs = 1000;
        try {
          const response = await fetch(`${topology.baseUrl}/pets`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ name, categoryId: 1 + (sequence % 5) }),
            signal: AbortSignal.timeout(20_000),
          });
          const text = await response.text();
          count(traffic.statuses, String(response.status));
          const body = parsed(text);
          if (response.status === 201 && body) {
            traffic.acknowledged.push({ id: Number(body['id']), name: String(body['name']) });
            traffic.acks.push({ sentAt, at: Date.now() });
            break;
          }
          failed(`POST ${response.status} ${text}`);
          if (response.status !== 503 && response.status !== 409)
            note(`POST: ${response.status} ${text.slice(0, 200)}`);
          if (response.status === 503) {
            // The balancer's own 503 (no instance in rotation) is not the Error object.
            if (body?.['code'] !== 'service_unavailable' || body['status'] !== 503)
              note(`POST 503 body: ${text.slice(0, 200)}`);
            const hinted = Number(response.headers.get('retry-after'));
            if (!(hinted > 0)) note('POST 503 without Retry-After');
            else retryAfterMs = hinted * 1000;
          }
        } catch (error) {
          // No answer (the balancer or an instance cut the connection): the same key again.
          count(traffic.statuses, 'network');
          failed(`POST: ${(error as Error).message} ${String((error as { cause?: unknown }).cause)}`);
          retryAfterMs = 500;
        }
        if (!running && attempt > 0) break;
        await sleep(retryAfterMs);
      }
    }
  };

  const reader = async () => {
    for (let sequence = 0; running && Date.now() < deadline; sequence += 1) {
      const known = traffic.acknowledged[Math.floor(Math.random() * traffic.acknowledged.length)];
      const url =
        known && sequence % 2 === 1 ? `${topology.baseUrl}/pets/${known.id}` : `${topology.baseUrl}/pets?limit=20`;
      try {
        const response = await fetch(url, { headers: auth, signal: AbortSignal.timeout(20_000) });
        const text = await response.text();
        count(traffic.readStatuses, String(response.status));
        if (response.status === 200) traffic.readsAt.push(Date.now());
        else failed(`GET ${response.status} ${text}`);
        const errorObject = parsed(text)?.['status'] === response.status;
        if (response.status === 503 && !errorObject) note(`GET 503 body: ${text.slice(0, 200)}`);
        else if (
          response.status !== 200 &&
          response.status !== 503 &&
          !(response.status === 404 && url.includes('/pets/'))
        )
          note(`GET: ${response.status} ${text.slice(0, 200)}`);
      } catch (error) {
        count(traffic.readStatuses, 'network');
        failed(`GET: ${(error as Error).message} ${String((error as { cause?: unknown }).cause)}`);
      }
      await sleep(50);
    }
  };

  const all = Promise.all([
    ...Array.from({ length: writers }, (_, index) => writer(index)),
    ...Array.from({ length: readers }, () => reader()),
  ]);
  traffic.stop = async () => {
    running = false;
    await all;
  };
  return traffic;
}

/** Until the traffic has had 20 writes acknowledged and 5 reads answered since `since` (ms since the epoch). */
async function flowing(traffic: Traffic, since: number): Promise<void> {
  await waitUntil({ what: 'writes and reads answered', timeoutMs: 60_000 }, async () =>
    traffic.acks.filter((ack) => ack.at >= since).length >= 20 &&
    traffic.readsAt.filter((at) => at >= since).length >= 5
      ? true
      : undefined,
  );
}

/** The longest time without an acknowledged write between from and to (ms). */
function longestWriteGap(acks: Traffic['acks'], from: number, to: number): number {
  const times = [from, ...acks.map((ack) => ack.at).filter((at) => at > from && at < to), to].sort((a, b) => a - b);
  return Math.max(...times.slice(1).map((time, index) => time - times[index]!));
}

async function primaryNode(topology: Topology): Promise<FailoverNode> {
  const states = await topology.cluster!.states();
  const primary = states.find((state) => state.role === 'primary');
  if (!primary) throw new Error(`no primary: ${JSON.stringify(states)}`);
  return topology.cluster!.nodes.find((node) => node.name === primary.name)!;
}

async function onNode<Row>(node: FailoverNode, sql: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString: node.url('pets'), connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query(sql, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** Every acknowledged pet is on node, as acknowledged; no name (one key, one logical pet) is there twice. */
async function checkPets(t: Test, node: FailoverNode, traffic: Traffic, prefix: string): Promise<void> {
  const rows = await onNode<{ id: string; name: string }>(node, 'SELECT id, name FROM pets WHERE name LIKE $1', [
    `${prefix}-%`,
  ]);
  const byId = new Map(rows.map((row) => [Number(row.id), row.name]));
  const missing = traffic.acknowledged.filter((pet) => byId.get(pet.id) !== pet.name);
  t.same(
    missing.slice(0, 10),
    [],
    `${traffic.acknowledged.length} acknowledged pets, ${traffic.acknowledged.length - missing.length} found on ${node.name}`,
  );
  const names = new Map<string, number>();
  for (const row of rows) names.set(row.name, (names.get(row.name) ?? 0) + 1);
  const twice = [...names].filter(([, times]) => times > 1);
  t.same(twice.slice(0, 10), [], `no key produced two pets (${rows.length} pets of this drill on ${node.name})`);
}

function checkAnswers(t: Test, traffic: Traffic, what: string, since: number): void {
  for (const failure of traffic.failures) t.comment(`+${failure.at - since} ms: ${failure.what}`);
  t.comment(
    `${what}: writes ${JSON.stringify(traffic.statuses)}, reads ${JSON.stringify(traffic.readStatuses)}; ` +
      `${traffic.acknowledged.length} pets acknowledged`,
  );
  t.same(traffic.unexpected, [], 'every refusal was a 503 Error object with Retry-After (or a 409 key in use)');
  t.notOk(traffic.statuses['500'] ?? traffic.readStatuses['500'], 'no 500');
}

t.test(
  'kill -9 of the primary node under write load, the old primary rejoining, then a planned switchover',
  topologyTestOptions(['DATABASE_STATEMENTS', 'DATABASE_READ_URL']),
  async (t) => {
    // At info: each transaction an instance rides through an outage is a line (riddenThrough counts them).
    const topology = await startTestTopology(t, { database: 'failover', serviceEnv: { LOG_LEVEL: 'info' } });
    const cluster = topology.cluster!;
    const prometheus = await startTestPrometheus(t, topology);

    await t.test('failover: the primary node killed (postmaster and pg_autoctl)', async (t) => {
      const alerts = watchObjectiveAlerts(prometheus);
      t.teardown(() => alerts.stop());
      const traffic = startTraffic(topology, 'failover');
      await flowing(traffic, 0);
      // As an outside drill would: the primary and its pids from topology status --json's list.
      const listed = await databaseNodes({
        startedAt: '',
        folder: topology.folder,
        baseUrl: topology.baseUrl,
        apiKey: '',
        haproxySocket: '',
        processes: topology.processes(),
        monitorPort: cluster.monitorPort,
      });
      const primaries = listed.filter((node) => node.role === 'primary');
      t.equal(primaries.length, 1, `topology status lists one primary (${listed.map((node) => node.role).join(', ')})`);
      const victim = cluster.nodes.find((node) => node.name === primaries[0]?.name)!;
      const pids = primaries[0]!.pids;
      const postmaster = Number(readFileSync(join(victim.dataDir, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
      t.ok(
        pids.includes(victim.pid) && pids.includes(postmaster),
        'its pids include the manager (pg_autoctl) and the postmaster',
      );
      const killedAt = Date.now();
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Ended already (a backend that finished).
        }
      }
      // Waits for the processes to be gone (and for any the list missed).
      await victim.kill();
      t.comment(`killed ${victim.name} (pids ${pids.join(' ')}) at ${new Date(killedAt).toISOString()}`);
      const resumed = await waitForAck(traffic, killedAt, 60_000);
      const gap = resumed - killedAt;
      t.comment(`writes resumed ${gap} ms after the kill`);
      await flowing(traffic, resumed);
      // The traffic goes on until the ticket has fired and the page's condition (with its 5 s short window) is
      // over, and then until a page, if any, has come and gone (a quiet service would resolve it by silence).
      const pageRule = scaledAlertRule(topology, 'PetsAvailabilityFastBurn', 'createPet');
      await waitUntil({ what: `${createPetTicket} firing`, timeoutMs: resolveBoundMs }, async () =>
        alerts.spans().some((span) => span.key === createPetTicket) ? true : undefined,
      ).catch(() => undefined); // asserted below
      await waitUntil({ what: `${createPetPage}'s condition over`, timeoutMs: resolveBoundMs }, async () =>
        Date.now() - resumed > 10_000 && (await prometheus.query(pageRule.expr)).length === 0 ? true : undefined,
      ).catch(() => undefined); // then the page below waits no longer than its bound
      await sleep(holdBlurMs);
      if (alerts.spans().some((span) => span.key === createPetPage))
        await alerts.waitForResolved(createPetPage, resolveBoundMs);
      await traffic.stop();
      await alerts.stop();
      const spans = alerts.spans();
      const kill = killedAt - alerts.startedAt;
      const runs = await heldRuns(prometheus, pageRule.expr, killedAt, Date.now());
      const held = Math.max(0, ...runs.map((run) => run.to - run.from));
      t.comment(
        `${createPetPage}'s condition held ${runs.map((run) => `from +${run.from - killedAt} to +${run.to - killedAt} ms`).join(', ') || 'never'} ` +
          `after the kill (its hold: ${pageRule.forMs} ms)`,
      );
      for (const span of spans)
        t.comment(
          `${span.key} (windows / ${drillWindowScale}): fired ${span.firingAt - kill} ms after the kill` +
            (span.resolvedAt === undefined ? ', still firing' : `, resolved ${span.resolvedAt - kill} ms after it`) +
            ` (writes resumed ${gap} ms after it)`,
        );
      // Writes fail (503) only once the failover outlasts the instances' ride-through (5 s): it does here.
      t.ok((traffic.statuses['503'] ?? 0) > 0, `the failover cost createPet 503s (${traffic.statuses['503'] ?? 0})`);
      const ticket = spans.find((span) => span.key === createPetTicket);
      t.ok(ticket && ticket.firingAt > kill, `${createPetTicket} (no floor, no hold) fired after the kill`);
      // The hold as designed (6 minutes, scaled), not as the generated file says: a rule without it must fail here.
      const holdMs = (pageForSeconds / drillWindowScale) * 1000;
      t.equal(pageRule.forMs, holdMs, `${createPetPage} holds ${holdMs} ms in the drill (6 minutes scaled)`);
      const page = spans.find((span) => span.key === createPetPage);
      if (held >= holdMs + holdBlurMs) {
        t.ok(page && page.firingAt > kill, `its condition held ${held} ms: ${createPetPage} fired after the kill`);
        t.ok(
          page?.resolvedAt !== undefined && page.resolvedAt > resumed - alerts.startedAt,
          'and resolved once writes were back',
        );
      } else if (held <= holdMs - holdBlurMs)
        t.notOk(page, `its condition held ${held} ms, less than the hold: ${createPetPage} did not fire`);
      else t.comment(`its condition held ${held} ms, within ${holdBlurMs} ms of the hold: a page or none is right`);
      // The hold itself: a page comes no sooner than the hold after its condition began (read per whole second,
      // so up to a second late, and the page seen up to 500 ms late).
      const began =
        page &&
        runs.find(
          (run) =>
            run.from - alerts.startedAt - holdBlurMs <= page.firingAt &&
            page.firingAt <= run.to - alerts.startedAt + holdBlurMs,
        );
      const after = page && began ? page.firingAt - (began.from - alerts.startedAt) : undefined;
      t.ok(
        !page || (after !== undefined && after >= holdMs - holdBlurMs),
        page
          ? `${createPetPage} fired ${after ?? '?'} ms after its condition began (hold ${holdMs} ms)`
          : `${createPetPage} did not fire, so fired no sooner than its hold`,
      );
      t.same(
        availabilitySpans(spans.filter((span) => span.firingAt <= kill)).map((span) => span.key),
        [],
        'no availability alert fired before the kill',
      );

      t.ok(gap < failoverBoundMs, `writes resumed within ${failoverBoundMs} ms of the kill (${gap} ms)`);
      checkAnswers(t, traffic, 'failover', killedAt);
      const readsDuring = traffic.readsAt.filter((at) => at > killedAt && at < resumed).length;
      t.ok(readsDuring > 0, `reads went on while writes could not (${readsDuring} answered 200 in the gap)`);
      const longestReadGap = longestWriteGap(
        traffic.readsAt.map((at) => ({ sentAt: at, at })),
        killedAt,
        resumed,
      );
      t.comment(`longest time without a successful read during the failover: ${longestReadGap} ms`);

      const primary = await primaryNode(topology);
      t.not(primary.name, victim.name, `${primary.name} took over`);
      await checkPets(t, primary, traffic, 'failover');

      await t.test('the old primary rejoins as a standby', async (t) => {
        await victim.restart();
        await cluster.waitForHealthy(120_000);
        const state = (await cluster.states()).find((node) => node.name === victim.name);
        t.equal(state?.role, 'standby', `${victim.name} is a standby (${state?.reportedState})`);
        const rows = await onNode<{ n: string }>(victim, "SELECT count(*) AS n FROM pets WHERE name LIKE 'failover-%'");
        t.ok(Number(rows[0]?.n) >= traffic.acknowledged.length, 'and has every acknowledged pet');
      });
    });

    await t.test('planned switchover: a short write gap, ridden through, nothing lost', async (t) => {
      const traffic = startTraffic(topology, 'switchover');
      await flowing(traffic, 0);
      const before = await primaryNode(topology);
      const riddenBefore = riddenThrough(topology);
      const startedAt = Date.now();
      await cluster.switchover();
      const resumed = await waitForAck(traffic, startedAt, 60_000);
      await flowing(traffic, resumed);
      const endedAt = Date.now();
      await traffic.stop();
      const gap = longestWriteGap(traffic.acks, startedAt, endedAt);
      const ridden = riddenThrough(topology) - riddenBefore;
      t.comment(
        `switchover: the longest write gap was ${gap} ms (first write after it began: ${resumed - startedAt} ms); ` +
          `writers got ${traffic.statuses['503'] ?? 0} 503s and ${traffic.statuses['network'] ?? 0} cut connections; ` +
          `${ridden} transactions and reads were ridden through`,
      );
      const after = await primaryNode(topology);
      t.not(after.name, before.name, `${before.name} handed over to ${after.name}`);
      t.ok(
        ridden > 0,
        `the instances waited the switchover out: ${ridden} transactions and reads tried again and done`,
      );
      t.ok(gap < switchoverBoundMs, `writes stopped for less than ${switchoverBoundMs} ms (${gap} ms)`);
      checkAnswers(t, traffic, 'switchover', startedAt);
      await checkPets(t, after, traffic, 'switchover');
    });
  },
);

/** How many transactions and reads the instances have ridden through an outage and then done, from their logs. */
function riddenThrough(topology: Topology): number {
  let total = 0;
  for (const service of topology.services) {
    if (!existsSync(service.logFile)) continue;
    total += readFileSync(service.logFile, 'utf8').split('tried again through a short outage: succeeded').length - 1;
  }
  return total;
}

/** When the first write sent after `after` was acknowledged. */
async function waitForAck(traffic: Traffic, after: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ack = traffic.acks.find((entry) => entry.sentAt > after);
    if (ack) return ack.at;
    await sleep(50);
  }
  throw new Error(`no write acknowledged within ${timeoutMs} ms`);
}
