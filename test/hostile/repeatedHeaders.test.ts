import t from 'tap';
import { singleValuedHeaders } from '../../src/http/arrival/repeatedHeaders.js';
import { loadOpenApiDocument } from '../../src/openapi/document.js';
import { assertErrorAnswer, rawRequest, startHostileApp } from './harness.js';

t.test('the single-valued headers come from the spec, lists excepted', async (t) => {
  const names = singleValuedHeaders(loadOpenApiDocument());
  t.ok(names.has('idempotency-key'), 'a header parameter of createPet');
  t.ok(names.has('host') && names.has('content-type'), "HTTP's own");
  t.notOk(names.has('if-none-match'), 'a list (RFC 9110 13.1.2): repeated lines are one list');
});

t.test('a single-valued header sent twice is a 400 Error object', async (t) => {
  const h = await startHostileApp(t);
  const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
  const createWith = (headers: [string, string][]) =>
    h.send(
      rawRequest(
        'POST /v1/pets HTTP/1.1',
        [['Authorization', `Bearer ${h.key}`], ['Content-Type', 'application/json'], ...headers],
        body,
      ),
    );

  await t.test('two Idempotency-Key headers are not merged into one key', async (t) => {
    const response = await createWith([
      ['Idempotency-Key', 'first'],
      ['idempotency-key', 'second'],
    ]);
    const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    t.match(error['message'], /Send one idempotency-key header/i);
  });

  await t.test('two Content-Type headers', async (t) => {
    const response = await createWith([['Content-Type', 'text/plain']]);
    const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    t.match(error['message'], /Send one Content-Type header/);
  });

  await t.test('two Host headers (RFC 9112 3.2)', async (t) => {
    const response = await h.send(rawRequest('GET /v1/pets HTTP/1.1', { Host: 'other.example' }));
    const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    t.match(error['message'], /Send one Host header/);
  });

  await t.test('one of each is served, and a list header may repeat', async (t) => {
    const created = await createWith([['Idempotency-Key', 'only-one']]);
    t.equal(created.status, 201);
    const listed = await h.send(
      rawRequest('GET /v1/pets HTTP/1.1', [
        ['Authorization', `Bearer ${h.key}`],
        ['If-None-Match', '"a"'],
        ['If-None-Match', '"b"'],
      ]),
    );
    t.equal(listed.status, 200);
  });
});
