import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { matchesDeclaredHeader } from '../helpers/contract.js';

t.test('X-Request-Id is echoed when valid and generated otherwise', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded');
  const echoed = await app.inject({
    method: 'GET',
    url: '/v1/pets',
    headers: { ...auth, 'x-request-id': 'client-42.retry:1' },
  });
  t.equal(echoed.statusCode, 200);
  t.equal(echoed.headers['x-request-id'], 'client-42.retry:1');

  for (const invalid of ['has spaces in it', 'x'.repeat(129), 'semi;colon', '']) {
    const replaced = await app.inject({
      method: 'GET',
      url: '/v1/pets',
      headers: { ...auth, 'x-request-id': invalid },
    });
    const id = replaced.headers['x-request-id'];
    t.not(id, invalid, `${JSON.stringify(invalid.slice(0, 20))} is replaced`);
    t.ok(matchesDeclaredHeader('RequestId', id), 'the generated id matches the declared RequestId header');
  }

  const generated = await Promise.all([1, 2].map(() => app.inject({ method: 'GET', url: '/v1/pets', headers: auth })));
  t.not(generated[0]?.headers['x-request-id'], generated[1]?.headers['x-request-id'], 'each request gets its own id');

  const errors = await app.inject({ method: 'GET', url: '/v1/pets', headers: { 'x-request-id': 'failing-1' } });
  t.equal(errors.statusCode, 401);
  t.equal(errors.headers['x-request-id'], 'failing-1', 'error responses carry it too');
  const unknown = await app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'failing-2' } });
  t.equal(unknown.headers['x-request-id'], 'failing-2');
});
