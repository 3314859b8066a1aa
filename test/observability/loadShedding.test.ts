import { setTimeout as sleep } from 'node:timers/promises';
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
    await sleep(500); // past the warm-up (two sample intervals)
    t.equal((await app.inject({ url: '/v1/pets', headers: auth })).statusCode, 200, 'not shedding at rest');

    type Response = Awaited<ReturnType<typeof app.inject>>;
    let shed: [Response, Response, Response] | undefined;
    for (let attempt = 0; attempt < 20 && !shed; attempt++) {
      blockEventLoop(800);
      await sleep(1); // the overdue sampling timer runs first
      const round = await Promise.all([
        app.inject({ url: '/v1/pets', headers: auth }),
        app.inject({ url: '/readyz' }),
        app.inject({ url: '/healthz' }),
      ]);
      if (round[0].statusCode === 503 && round[1].statusCode === 503) shed = round;
    }
    if (!shed) return t.fail('the overloaded loop never caused a 503');
    const [api, ready, health] = shed;
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
    for (let attempt = 0; attempt < 100 && !recovered; attempt++) {
      await sleep(100);
      const [apiAgain, readyAgain] = await Promise.all([
        app.inject({ url: '/v1/pets', headers: auth }),
        app.inject({ url: '/readyz' }),
      ]);
      recovered = apiAgain.statusCode === 200 && readyAgain.statusCode === 200;
    }
    t.ok(recovered, 'once the loop is idle again, API requests and /readyz answer 200');
  },
);
