import t from 'tap';
import { generateApiKey } from '../../src/auth/keys.js';
import { assertErrorAnswer, rawRequest, startHostileApp } from './harness.js';

t.test('two Authorization headers are a 400, whichever comes first', async (t) => {
  const h = await startHostileApp(t);
  const valid = `Bearer ${h.key}`;
  const wrong = `Bearer ${generateApiKey()}`;
  for (const [label, first, second] of [
    ['valid key first', valid, wrong],
    ['valid key second', wrong, valid],
    ['the same valid key twice', valid, valid],
    ['an empty one first', '', valid],
  ] as const) {
    await t.test(label, async (t) => {
      const response = await h.send(
        rawRequest('GET /v1/pets HTTP/1.1', [
          ['Authorization', first],
          ['authorization', second],
        ]),
      );
      const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
      t.match(error['message'], /one Authorization header/);
      t.equal(response.headers['www-authenticate'], 'Bearer realm="pets", error="invalid_request"');
    });
  }

  await t.test('one header still works', async (t) => {
    const response = await h.send(rawRequest('GET /v1/pets HTTP/1.1', { Authorization: valid }));
    t.equal(response.status, 200);
  });
});
