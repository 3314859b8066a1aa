import t from 'tap';
import { startTestApp } from '../helpers/app.js';

t.test('draining: not ready, still serving, every answer closes its connection', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded');
  const before = await app.inject({ url: '/v1/pets', headers: auth });
  t.equal(before.statusCode, 200);
  t.not(before.headers['connection'], 'close', 'keep-alive as usual before the drain');
  t.equal((await app.inject({ url: '/readyz' })).statusCode, 200);

  app.beginDrain();
  const ready = await app.inject({ url: '/readyz' });
  t.equal(ready.statusCode, 503, '/readyz takes the instance out of the balancer');
  t.same(ready.json(), { code: 'service_unavailable', message: 'The service is shutting down.', status: 503 });
  const served = await app.inject({ url: '/v1/pets', headers: auth });
  t.equal(served.statusCode, 200, 'requests are still served');
  t.equal(served.headers['connection'], 'close', 'and close their connection');
  const created = await app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: auth,
    payload: { name: 'Late', categoryId: 1 },
  });
  t.equal(created.statusCode, 201, 'writes too');
  t.equal((await app.inject({ url: '/healthz' })).statusCode, 200, 'alive: nothing to restart');
});
