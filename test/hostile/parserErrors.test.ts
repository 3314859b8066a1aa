import t from 'tap';
import { nodeServerOptions } from '../../src/http/server/nodeServerOptions.js';
import { assertErrorAnswer, exchange, parseResponse, rawRequest, startHostileApp } from './harness.js';

t.test("Node's parser errors answer the Error object, with a request id and a log line", async (t) => {
  const h = await startHostileApp(t);

  await t.test('a request line that is not HTTP: 400', async (t) => {
    const response = await h.send('GARBAGE\r\n\r\n');
    const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    t.match(error['message'], /not valid HTTP/);
  });

  await t.test('a header without a colon: 400', async (t) => {
    const response = await h.send('GET /v1/pets HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n');
    await assertErrorAnswer(t, h, response, 400, 'invalid_request');
  });

  await t.test('one header too large: 431', async (t) => {
    const response = await h.send(rawRequest('GET /v1/pets HTTP/1.1', { 'X-Big': 'y'.repeat(20000) }));
    await assertErrorAnswer(t, h, response, 431, 'invalid_request');
  });

  await t.test('too many headers: 431', async (t) => {
    const many = Array.from({ length: 3000 }, (_, index): [string, string] => [`X-H${index}`, 'v']);
    await assertErrorAnswer(t, h, await h.send(rawRequest('GET /v1/pets HTTP/1.1', many)), 431, 'invalid_request');
  });

  await t.test('HTTP/1.1 without Host: 400 (Node would answer a bare 400 of its own)', async (t) => {
    const response = await h.send('GET /v1/pets HTTP/1.1\r\nConnection: close\r\n\r\n');
    const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    t.match(error['message'], /Host/);
  });

  t.notOk(h.logText().includes('rawPacket'), 'no raw request bytes in the log');
});

t.test("fastify's router errors answer the Error object, with a request id and a log line", async (t) => {
  const h = await startHostileApp(t);
  const auth = { Authorization: `Bearer ${h.key}` };

  await t.test('bad percent-encoding: 400', async (t) => {
    const response = await h.send(rawRequest('GET /v1/pets/%zz HTTP/1.1', auth));
    const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    t.match(error['message'], /percent-encoding/);
  });

  await t.test('a path parameter over 100 characters: 414, its message short', async (t) => {
    const response = await h.send(rawRequest(`GET /v1/pets/${'1'.repeat(5000)} HTTP/1.1`, auth));
    const error = await assertErrorAnswer(t, h, response, 414, 'invalid_request');
    t.ok(String(error['message']).length < 200);
  });
});

t.test('a request that does not arrive in time: 408, and the headers timeout holds', async (t) => {
  t.match(nodeServerOptions(2000), { headersTimeout: 2000, connectionsCheckingInterval: 500 });
  t.equal(nodeServerOptions(60000).connectionsCheckingInterval, 1000, 'checked at least every second');

  const h = await startHostileApp(t, { limits: { headersTimeoutMs: 1000 } });
  const started = Date.now();
  // Headers started and never finished: a slow-headers (slowloris) client.
  const raw = await exchange(h.port, ['GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n']);
  const elapsed = Date.now() - started;
  await assertErrorAnswer(t, h, parseResponse(raw), 408, 'invalid_request');
  // Node checks every 30 s by default: without the interval the cut comes after up to 31 s.
  t.ok(elapsed < 10000, `the connection was closed after ${elapsed} ms (headers timeout 1000 ms)`);
});
