import { Agent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { waitUntil } from '../../lib/instances/index.js';
import {
  addresses,
  bearer,
  containerState,
  createVolume,
  firstKeyOf,
  generousRateLimit,
  imageRef,
  podman,
  podmanOk,
  requestOnce,
  startContainer,
  waitReady,
  type Container,
  type Outcome,
} from './harness.js';

/**
 * The image's process lifecycle as the container runtime drives it: a
 * SIGKILL then a start on the same volume, and `podman stop` (SIGTERM) with
 * clients sending requests throughout.
 */

// Shorter than the defaults (10 s each) to keep the suite quick; the bound is the same rule.
const drainDelayMs = 3000;
const shutdownTimeoutMs = 4000;
const writers = 3;
const readers = 4;

t.ok(imageRef, 'PET_STORE_IMAGE names the image under test (npm run test:system -- image sets it)');

/** Creates pets from a few concurrent clients until `stop` says so; `acknowledged` gets each id the service acknowledged (201). */
async function writeUntil(
  container: Container,
  key: string,
  stop: { now: boolean },
  acknowledged: number[],
): Promise<void> {
  const writer = async (index: number) => {
    for (let count = 0; !stop.now && count < 10_000; count += 1) {
      try {
        const response = await fetch(`${container.baseUrl}/pets`, {
          method: 'POST',
          headers: bearer(key),
          body: JSON.stringify({ name: `kill-${index}-${count}`, categoryId: 1 + (count % 3) }),
        });
        if (response.status === 201) acknowledged.push(((await response.json()) as { id: number }).id);
        else await response.arrayBuffer();
      } catch {
        // The container is being killed: what was not acknowledged may be lost.
        await sleep(50);
      }
    }
  };
  await Promise.all(Array.from({ length: writers }, (_, index) => writer(index)));
}

t.test('the image through SIGKILL and SIGTERM', async (t) => {
  const volume = await createVolume(t);
  let container = await startContainer(t, {
    volume,
    // The writes below reach the default quota (300 a minute) within a second on a quiet machine.
    env: { DRAIN_DELAY_MS: String(drainDelayMs), SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs), ...generousRateLimit },
  });
  await waitReady(container);
  const key = await firstKeyOf(container.name);

  await t.test(
    'podman kill -s KILL under writes, then a start on the same volume: same key, every acknowledged pet',
    async (t) => {
      const stop = { now: false };
      const acknowledged: number[] = [];
      const writing = writeUntil(container, key, stop, acknowledged);
      // Killed mid-stream: once every writer has had a few creates acknowledged.
      await waitUntil({ what: `${writers * 5} pets acknowledged before the kill`, timeoutMs: 60_000 }, async () =>
        acknowledged.length >= writers * 5 ? true : undefined,
      );
      await podmanOk(['kill', '--signal', 'KILL', container.name]);
      stop.now = true;
      await writing;
      t.ok(acknowledged.length > 0, `pets were acknowledged before the kill (${acknowledged.length})`);
      t.notOk((await containerState(container.name)).running, 'the container is down after SIGKILL');

      await podmanOk(['start', container.name]);
      container = await addresses(container.name);
      await waitReady(container);
      const missing: number[] = [];
      for (const id of acknowledged) {
        const response = await fetch(`${container.baseUrl}/pets/${id}`, { headers: bearer(key) });
        if (response.status !== 200) missing.push(id);
        await response.arrayBuffer();
      }
      t.same(missing, [], `each of the ${acknowledged.length} acknowledged pets is there, read with the first key`);
    },
  );

  await t.test(
    `podman stop drains, exits 0 within DRAIN_DELAY_MS + SHUTDOWN_TIMEOUT_MS; requests meanwhile are answered or refused, never cut mid-answer`,
    async (t) => {
      const outcomes: Array<Outcome & { during: boolean; readiness: boolean; sentAt: number; answeredAt: number }> = [];
      const phase = { stopping: false, done: false };
      const keepAlive = new Agent({ keepAlive: true });
      const client = async (index: number) => {
        // Half the clients open a connection per request, half keep theirs; every third request asks /readyz.
        const agent = index % 2 === 0 ? false : keepAlive;
        for (let count = 0; !phase.done && count < 20_000; count += 1) {
          const readiness = count % 3 === 0;
          const url = readiness ? `${container.origin}/readyz` : `${container.baseUrl}/pets?limit=5`;
          const sentAt = Date.now();
          const outcome = await requestOnce(url, agent, bearer(key));
          outcomes.push({ ...outcome, during: phase.stopping, readiness, sentAt, answeredAt: Date.now() });
          await sleep(10);
        }
      };
      const clients = Promise.all(Array.from({ length: readers }, (_, index) => client(index)));
      await waitUntil({ what: 'answers before the stop', timeoutMs: 60_000 }, async () =>
        outcomes.filter((outcome) => outcome.kind === 'answered').length >= 2 * readers ? true : undefined,
      );

      phase.stopping = true;
      const started = Date.now();
      // Past --time podman sends SIGKILL (exit code 137): the bound is the one the docs give operators.
      const stopped = await podman([
        'stop',
        '--time',
        String(Math.ceil((drainDelayMs + shutdownTimeoutMs) / 1000)),
        container.name,
      ]);
      const elapsed = Date.now() - started;
      // The clients go on until each has had an outcome for a request sent after the exit.
      const exitedAt = Date.now();
      await waitUntil({ what: 'an outcome per client after the exit', timeoutMs: 60_000 }, async () =>
        outcomes.filter((outcome) => outcome.sentAt >= exitedAt).length >= readers ? true : undefined,
      );
      phase.done = true;
      await clients;
      keepAlive.destroy();

      t.equal(stopped.status, 0, 'podman stop exits 0', { stderr: stopped.stderr });
      t.equal((await containerState(container.name)).exitCode, 0, 'the service exited 0 (not killed at the deadline)');
      t.ok(elapsed >= drainDelayMs, `it drained before stopping (${elapsed} ms >= DRAIN_DELAY_MS ${drainDelayMs})`);
      t.comment(
        `podman stop took ${elapsed} ms (DRAIN_DELAY_MS ${drainDelayMs} + SHUTDOWN_TIMEOUT_MS ${shutdownTimeoutMs})`,
      );

      const broken = (kind: Outcome['kind']) =>
        outcomes
          .filter((outcome) => outcome.kind === kind)
          .map((outcome) => ({
            ...outcome,
            sentAfterStopMs: outcome.sentAt - started,
            endedAfterStopMs: outcome.answeredAt - started,
          }));
      t.same(broken('cut'), [], `no answer was cut (of ${outcomes.length} requests)`);
      // Linux resets the connections still in a listening socket's accept queue when it closes
      // (a bare node:http server does the same): such a request never reached the service. That
      // may only happen as the service stops listening, at the end of the drain, never before.
      const resets = broken('reset');
      t.same(
        resets.filter((outcome) => outcome.endedAfterStopMs < drainDelayMs),
        [],
        'no connection was reset before the drain ended',
      );
      t.comment(`${resets.length} connections reset before any answer as the service stopped listening`);
      const during = outcomes.filter((outcome) => outcome.during);
      const answered = during.filter((outcome) => outcome.kind === 'answered');
      const notReady = answered.find((outcome) => outcome.readiness && outcome.status === 503);
      t.ok(notReady, '/readyz answered 503 while draining');
      // Requests sent after that answer are surely in the drain (the signal takes a moment to arrive).
      const drainStarted = notReady?.answeredAt ?? Infinity;
      const served = answered.filter(
        (outcome) => !outcome.readiness && outcome.status === 200 && outcome.sentAt > drainStarted,
      );
      t.ok(served.length > 0, `the API went on answering while draining (${served.length} requests)`);
      t.ok(
        served.every((outcome) => outcome.kind === 'answered' && outcome.connectionClose),
        'with Connection: close',
      );
      t.ok(
        during.some((outcome) => outcome.kind === 'refused'),
        'connections were refused once the service stopped listening',
      );
      t.ok(
        outcomes.some((outcome) => !outcome.during && outcome.kind === 'answered' && outcome.status === 200),
        'requests were answered before the stop',
      );
    },
  );
});
