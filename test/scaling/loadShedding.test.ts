import { setTimeout as sleep } from 'node:timers/promises';
import { waitUntil } from '../../lib/instances/processes.js';
import t from 'tap';
import { createMetrics } from '../../src/observability/metrics.js';
import { startTestApp } from '../helpers/app.js';
import { sample } from '../helpers/metrics.js';

/** Keeps the event loop busy, as a CPU-bound request or a long synchronous task would. */
function blockEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

t.test(
  'past the event-loop delay threshold API requests get 503, /readyz 503, /healthz 200; then it recovers',
  async (t) => {
    const metrics = createMetrics();
    const { app, auth } = await startTestApp(
      t,
      'embedded',
      {},
      { metrics, limits: { loadShedding: { maxEventLoopDelayMs: 100, sampleIntervalMs: 200, retryAfterSeconds: 7 } } },
    );
    await app.ready();
    // Past the warm-up (two sample intervals), and past whatever delay a busy machine gave the loop.
    const atRest = await waitUntil({ what: 'a 200 at rest', timeoutMs: 60_000 }, async () => {
      const { statusCode } = await app.inject({ url: '/v1/pets', headers: auth });
      return statusCode === 200 ? statusCode : undefined;
    });
    t.equal(atRest, 200, 'not shedding at rest');

    type Response = Awaited<ReturnType<typeof app.inject>>;
    let shed: [Response, Response, Response, string] | undefined;
    for (let attempt = 0; attempt < 20 && !shed; attempt++) {
      blockEventLoop(800);
      await sleep(1); // the overdue sampling timer runs first
      const round = await Promise.all([
        app.inject({ url: '/v1/pets', headers: auth }),
        app.inject({ url: '/readyz' }),
        app.inject({ url: '/healthz' }),
        metrics.registry!.metrics(),
      ]);
      if (round[0].statusCode === 503 && round[1].statusCode === 503 && sample(round[3], 'pets_load_shedding') === 1)
        shed = round;
    }
    if (!shed) return t.fail('the overloaded loop never caused a 503 with pets_load_shedding 1');
    const [api, ready, health, scrape] = shed;
    t.equal(sample(scrape, 'pets_ready'), 0, 'not ready while shedding: PetsNotReady tells it by pets_load_shedding');
    t.same(api.json(), {
      code: 'service_unavailable',
      message: 'The service is overloaded; retry later.',
      status: 503,
    });
    t.equal(api.headers['retry-after'], '7');
    t.equal(ready.json<{ code: string }>().code, 'service_unavailable');
    t.equal(health.statusCode, 200, '/healthz stays 200: the process is alive');
    t.ok(
      (sample(await metrics.registry!.metrics(), 'pets_load_shed_requests_total{reason="eventLoopDelay"}') ?? 0) >= 1,
    );

    let recovered = false;
    for (const started = Date.now(); !recovered && Date.now() - started < 60_000;) {
      await sleep(100);
      const [apiAgain, readyAgain] = await Promise.all([
        app.inject({ url: '/v1/pets', headers: auth }),
        app.inject({ url: '/readyz' }),
      ]);
      recovered = apiAgain.statusCode === 200 && readyAgain.statusCode === 200;
    }
    t.ok(recovered, 'once the loop is idle again, API requests and /readyz answer 200');
    t.equal(sample(await metrics.registry!.metrics(), 'pets_load_shedding'), 0, 'and pets_load_shedding is 0 again');
  },
);

t.test('the start-up counts until the database is ready: no 503 for the delay preparing it caused', async (t) => {
  let ready!: () => void;
  const databaseReady = new Promise<void>((resolve) => (ready = resolve));
  const sampleIntervalMs = 200;
  const { app, auth } = await startTestApp(
    t,
    'embedded',
    {},
    {
      databaseReady,
      // A bar any blocked loop passes: only the warm-up keeps a request from being shed.
      limits: { loadShedding: { maxEventLoopDelayMs: 1, sampleIntervalMs, retryAfterSeconds: 7 } },
    },
  );
  await app.ready();
  // Timers fire in the order they are due: past this one, a warm-up counted from onReady has ended.
  await sleep(3 * sampleIntervalMs);
  blockEventLoop(800); // the database's preparation, on the loop
  await sleep(1); // the overdue sampling timer runs first
  ready();
  await databaseReady;
  const first = await app.inject({ url: '/v1/pets', headers: auth });
  t.equal(first.statusCode, 200, 'the first request once ready is served');

  // Two sample intervals after it, the delay counts again.
  const shedStatus = await waitUntil({ what: 'a 503 past the warm-up', timeoutMs: 60_000, intervalMs: 1 }, async () => {
    blockEventLoop(300);
    await sleep(1);
    const { statusCode } = await app.inject({ url: '/v1/pets', headers: auth });
    return statusCode === 503 ? statusCode : undefined;
  });
  t.equal(shedStatus, 503, 'and then a blocked loop is shed');
});

t.test('LOAD_SHED_EVENT_LOOP_DELAY_MS is the threshold: 1 sheds a blocked loop, 0 never sheds', async (t) => {
  // Both apps watch this process's one event loop, so each round blocks them alike.
  const limits = { loadShedding: { sampleIntervalMs: 200 } };
  const off = await startTestApp(t, 'embedded', { LOAD_SHED_EVENT_LOOP_DELAY_MS: 0 }, { limits });
  await off.app.ready(); // first: its warm-up ends no later than the other's
  const low = await startTestApp(t, 'embedded', { LOAD_SHED_EVENT_LOOP_DELAY_MS: 1 }, { limits });
  await low.app.ready();
  const offStatuses = new Set<number>();
  const lowShed = await waitUntil({ what: 'a 503 at a 1 ms threshold', timeoutMs: 60_000, intervalMs: 1 }, async () => {
    blockEventLoop(300);
    await sleep(1); // the overdue sampling timers run first
    const [lowAnswer, offAnswer, offReady] = await Promise.all([
      low.app.inject({ url: '/v1/pets', headers: low.auth }),
      off.app.inject({ url: '/v1/pets', headers: off.auth }),
      off.app.inject({ url: '/readyz' }),
    ]);
    offStatuses.add(offAnswer.statusCode).add(offReady.statusCode);
    return lowAnswer.statusCode === 503 ? lowAnswer.statusCode : undefined;
  });
  t.equal(lowShed, 503, 'the setting sets the threshold');
  t.same([...offStatuses], [200], 'with it 0, the same blocked loop never sheds an API request nor fails /readyz');
});
