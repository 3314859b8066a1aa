import t from 'tap';
import { DatabaseUnavailableError } from '../../src/db/index.js';
import { shedReasons } from '../../src/http/arrival/loadShedding.js';
import { authFailureReasons, createMetrics } from '../../src/observability/metrics.js';
import { idempotentOperations, loadOpenApiDocument } from '../../src/openapi/document.js';
import { forEachBackend, startTestApp, testLimits } from '../helpers/app.js';
import { sample } from '../helpers/metrics.js';

t.test('requests, auth failures, rate limiting, readiness and the pool are measured', (t) =>
  forEachBackend(t, async (t, backend) => {
    const metrics = createMetrics();
    const { app, auth } = await startTestApp(t, backend, { RATE_LIMIT_MAX: 6 }, { metrics });
    t.equal((await app.inject({ url: '/v1/pets', headers: auth })).statusCode, 200);
    t.equal((await app.inject({ url: '/v1/pets/987654', headers: auth })).statusCode, 404);
    t.equal((await app.inject({ url: '/no/such/path/42' })).statusCode, 404);
    t.equal((await app.inject({ url: '/v1/pets' })).statusCode, 401);
    t.equal((await app.inject({ url: '/v1/pets', headers: { authorization: 'Basic abc' } })).statusCode, 401);
    t.equal(
      (await app.inject({ url: '/v1/pets', headers: { authorization: 'Bearer not-a-known-key-000000' } })).statusCode,
      401,
    );
    t.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
    // The limit is 6 per key: the 5th and 6th pass, the 7th is refused.
    for (let i = 0; i < 4; i++) await app.inject({ url: '/v1/pets', headers: auth });
    t.equal((await app.inject({ url: '/v1/pets', headers: auth })).statusCode, 429);

    const scrape = await metrics.registry!.metrics();
    const count = (labels: string) => sample(scrape, `http_server_request_duration_seconds_count{${labels}}`);
    t.equal(count('operation="listPets",method="GET",status_code="200"'), 5);
    t.equal(count('operation="getPet",method="GET",status_code="404"'), 1);
    t.equal(count('operation="unknown",method="GET",status_code="404"'), 1, 'unmatched routes share one label');
    t.equal(count('operation="listPets",method="GET",status_code="429"'), 1);
    t.notMatch(scrape, /no\/such\/path/, 'the raw path of an unknown route is never a label');
    t.notMatch(scrape, /healthz/, 'probes are not API requests');
    t.equal(sample(scrape, 'pets_authentication_failures_total{reason="missing"}'), 1);
    t.equal(sample(scrape, 'pets_authentication_failures_total{reason="malformed"}'), 1);
    t.equal(sample(scrape, 'pets_authentication_failures_total{reason="invalid"}'), 1);
    t.equal(sample(scrape, 'pets_rate_limit_rejections_total'), 1);
    t.equal(sample(scrape, 'pets_ready'), 1);
    // Each operation that declares an Idempotency-Key has its replay series from the start.
    const idempotent = idempotentOperations(loadOpenApiDocument()).map(({ operation }) => operation.operationId);
    t.not(idempotent.length, 0);
    for (const operation of idempotent)
      t.equal(sample(scrape, `pets_idempotent_replays_total{operation="${operation}"}`), 0, operation);
    t.notMatch(scrape, /^pets_idempotent_replays_total \d/m, 'no series without its operation');
    t.ok((sample(scrape, 'nodejs_heap_size_used_bytes') ?? 0) > 0, 'default process metrics are there');
    t.match(scrape, /nodejs_eventloop_lag_seconds /);
    t.match(scrape, /nodejs_gc_duration_seconds/);
    if (backend === 'postgres') {
      t.equal(sample(scrape, 'pets_db_pool_max_connections'), 5);
      t.ok((sample(scrape, 'pets_db_pool_connections') ?? 0) >= 1, 'the pool has opened a connection');
      t.equal(sample(scrape, 'pets_db_pool_waiting_requests'), 0);
    } else {
      t.equal(sample(scrape, 'pets_db_pool_connections'), 0, 'no pool on the embedded database');
    }
  }),
);

t.test('the readiness gauge follows /readyz, and 5xx are counted by status and code', (t) =>
  forEachBackend(t, async (t, backend) => {
    const metrics = createMetrics();
    // readinessMaxAgeMs 0: the gauge sees the database as it is now, not a shared earlier probe.
    const limits = { ...testLimits, readinessMaxAgeMs: 0 };
    const { app, auth, db } = await startTestApp(t, backend, {}, { metrics, limits });
    const query = db.query.bind(db);
    let failing = false;
    db.query = (statement, values) =>
      failing ? Promise.reject(new DatabaseUnavailableError(new Error('down'))) : query(statement, values);
    failing = true;
    t.equal((await app.inject({ url: '/v1/pets', headers: auth })).statusCode, 503);
    t.equal((await app.inject({ url: '/readyz' })).statusCode, 503);
    const scrape = await metrics.registry!.metrics();
    t.equal(
      sample(scrape, 'pets_server_errors_total{status_code="503",code="service_unavailable"}'),
      1,
      "the API's 503, not /readyz's: a probe's answer is pets_ready",
    );
    t.equal(sample(scrape, 'pets_ready'), 0);
    failing = false;
    t.equal(sample(await metrics.registry!.metrics(), 'pets_ready'), 1);
  }),
);

t.test(
  "each operation's declared 5xx series exist at 0 before any request, so rate() counts the first failures",
  async (t) => {
    const metrics = createMetrics();
    await startTestApp(t, 'embedded', {}, { metrics });
    const scrape = await metrics.registry!.metrics();
    for (const [operation, method] of [
      ['listPets', 'GET'],
      ['createPet', 'POST'],
      ['getPet', 'GET'],
    ])
      for (const status of ['500', '503'])
        t.equal(
          sample(
            scrape,
            `http_server_request_duration_seconds_count{operation="${operation}",method="${method}",status_code="${status}"}`,
          ),
          0,
          `${operation} ${status}`,
        );
    t.notMatch(scrape, /status_code="200"/, 'only the 5xx: a success series appears with its first answer');
  },
);

t.test('every counter has a sample from the start, for each label value the code can emit', async (t) => {
  const metrics = createMetrics();
  await startTestApp(t, 'embedded', {}, { metrics });
  const scrape = await metrics.registry!.metrics();
  const counters = (await metrics.registry!.getMetricsAsJSON()).filter(
    (metric) => String(metric.type) === 'counter' && metric.name.startsWith('pets_'),
  );
  t.ok(counters.length >= 6, `the service's counters: ${counters.map((metric) => metric.name).join(', ')}`);
  for (const counter of counters) t.ok(counter.values.length > 0, `${counter.name} has a sample before any request`);
  for (const reason of shedReasons) t.equal(sample(scrape, `pets_load_shed_requests_total{reason="${reason}"}`), 0);
  for (const reason of authFailureReasons)
    t.equal(sample(scrape, `pets_authentication_failures_total{reason="${reason}"}`), 0, reason);
  t.equal(sample(scrape, 'pets_server_errors_total{status_code="500",code="internal_error"}'), 0);
  t.equal(sample(scrape, 'pets_server_errors_total{status_code="503",code="service_unavailable"}'), 0);
  for (const outcome of ['succeeded', 'gave_up'])
    t.equal(sample(scrape, `pets_db_ride_throughs_total{outcome="${outcome}"}`), 0, outcome);
  t.equal(sample(scrape, 'pets_rate_limit_rejections_total'), 0);
  t.equal(sample(scrape, 'pets_load_shedding'), 0);
});

t.test('a planned drain shows as pets_draining 1 beside pets_ready 0', async (t) => {
  const metrics = createMetrics();
  const { app } = await startTestApp(t, 'embedded', {}, { metrics });
  let scrape = await metrics.registry!.metrics();
  t.equal(sample(scrape, 'pets_draining'), 0);
  t.equal(sample(scrape, 'pets_ready'), 1);
  app.beginDrain();
  scrape = await metrics.registry!.metrics();
  t.equal(sample(scrape, 'pets_draining'), 1, 'PetsNotReady reads it to stay quiet');
  t.equal(sample(scrape, 'pets_ready'), 0);
});

t.test('a createPet answered from a stored Idempotency-Key answer counts one replay of createPet', (t) =>
  forEachBackend(t, async (t, backend) => {
    const metrics = createMetrics();
    const { app, auth } = await startTestApp(t, backend, {}, { metrics });
    const create = (key: string) =>
      app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { ...auth, 'idempotency-key': key },
        payload: { name: 'Rex', categoryId: 1 },
      });
    t.equal((await create('order-1')).statusCode, 201);
    const replay = await create('order-1');
    t.equal(replay.headers['idempotent-replayed'], 'true');
    t.equal((await create('order-2')).statusCode, 201);
    t.equal(
      sample(await metrics.registry!.metrics(), 'pets_idempotent_replays_total{operation="createPet"}'),
      1,
      'first answers are not replays',
    );
  }),
);

t.test(
  'a failure while counting a failed lookup (once its 401 is sent) neither hangs nor changes the answer',
  async (t) => {
    const metrics = {
      ...createMetrics(),
      authenticationFailed: () => {
        throw new Error('metrics broke');
      },
    };
    const { app } = await startTestApp(t, 'embedded', {}, { metrics });
    const answer = app.inject({ url: '/v1/pets', headers: { authorization: 'Bearer not-a-known-key-000000' } });
    const hung = new Promise<'hung'>((resolve) =>
      setTimeout(() => {
        resolve('hung');
      }, 60_000).unref(),
    );
    const response = await Promise.race([answer, hung]);
    if (response === 'hung') {
      t.fail('no answer within 60 s');
      return;
    }
    t.equal(response.statusCode, 401);
    t.match(response.json(), { code: 'unauthorized', status: 401 });
  },
);

t.test('a failure while counting a 429 is a 500 Error object, never a hung request', async (t) => {
  const metrics = {
    ...createMetrics(),
    rateLimited: () => {
      throw new Error('metrics broke');
    },
  };
  const { app, auth } = await startTestApp(t, 'embedded', { RATE_LIMIT_MAX: 1 }, { metrics });
  t.equal((await app.inject({ url: '/v1/pets', headers: auth })).statusCode, 200, 'within the limit');
  const response = await app.inject({ url: '/v1/pets', headers: auth });
  t.equal(response.statusCode, 500);
  t.match(response.json(), { code: 'internal_error', status: 500 });
});
