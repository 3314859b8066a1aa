import t from 'tap';
import { assertErrorAnswer, interceptQueries, rawRequest, startHostileApp } from './harness.js';

t.test('paths: an empty or unassigned id is 404, a non-int64 one is 400', async (t) => {
  const counter = { pets: 0 };
  const h = await startHostileApp(
    t,
    {},
    'embedded',
    interceptQueries((statement, run) => {
      if (/\bpets\b/.test(statement.text)) counter.pets += 1;
      return run();
    }),
  );
  const auth = { Authorization: `Bearer ${h.key}` };
  const get = (path: string) => h.send(rawRequest(`GET ${path} HTTP/1.1`, auth));

  await t.test('GET /v1/pets/ is a 404, as docs/api.md says', async (t) => {
    await assertErrorAnswer(t, h, await get('/v1/pets/'), 404, 'not_found');
  });

  await t.test('a valid int64 beyond 2^53 - 1 is a 404, answered without a query', async (t) => {
    const before = counter.pets;
    for (const id of ['9223372036854775807', '9007199254740992', '0', '-9223372036854775808']) {
      await assertErrorAnswer(t, h, await get(`/v1/pets/${id}`), 404, 'not_found');
    }
    t.equal(counter.pets, before, 'the database was not asked');
  });

  await t.test('outside int64, or not an integer: 400', async (t) => {
    for (const id of ['9223372036854775808', '-9223372036854775809', '99999999999999999999999', '1.5', 'abc']) {
      await assertErrorAnswer(t, h, await get(`/v1/pets/${id}`), 400, 'invalid_request');
    }
  });

  await t.test('categoryId beyond 2^53 - 1 in a body stays a 400 (JSON rounding)', async (t) => {
    const body = '{"name":"Rex","categoryId":9007199254740993}';
    const response = await h.send(
      rawRequest('POST /v1/pets HTTP/1.1', { ...auth, 'Content-Type': 'application/json' }, body),
    );
    const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    t.match(error['message'], /9007199254740991/);
  });
});
