import { connect } from 'node:net';
import t from 'tap';
import { generateApiKey } from '../../src/auth/keys.js';
import { assertErrorAnswer, parseResponse, rawRequest, startHostileApp } from './harness.js';

/**
 * Sends the head of a request that expects 100-continue, sends its body
 * only if 100 Continue arrives, and collects everything until the server
 * closes the connection.
 */
function sendExpectingContinue(port: number, head: string, body: string): Promise<{ raw: string; sentBody: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let raw = '';
    let sentBody = false;
    socket.on('data', (chunk: Buffer) => {
      raw += chunk.toString('latin1');
      if (!sentBody && raw.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        sentBody = true;
        socket.write(body);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      resolve({ raw, sentBody });
    });
    socket.write(head);
  });
}

/** The head of a createPet that expects 100-continue; without Connection: close unless asked. */
function continueHead(key: string, contentLength: number, close = true): string {
  const lines = [
    'POST /v1/pets HTTP/1.1',
    'Host: 127.0.0.1',
    `Authorization: Bearer ${key}`,
    'Content-Type: application/json',
    `Content-Length: ${contentLength}`,
    'Expect: 100-continue',
    ...(close ? ['Connection: close'] : []),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

t.test('Expect', async (t) => {
  const h = await startHostileApp(t);

  await t.test('an expectation other than 100-continue is a 417 Error object', async (t) => {
    const response = await h.send(
      rawRequest('GET /v1/pets HTTP/1.1', { Authorization: `Bearer ${h.key}`, Expect: 'foo' }),
    );
    const error = await assertErrorAnswer(t, h, response, 417, 'invalid_request');
    t.match(error['message'], /'foo' cannot be met; only Expect: 100-continue/);
  });

  await t.test('100 Continue comes only after the key is checked', async (t) => {
    const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
    const { raw, sentBody } = await sendExpectingContinue(
      h.port,
      continueHead(generateApiKey(), Buffer.byteLength(body), false),
      body,
    );
    t.notOk(sentBody, 'no 100 Continue for a wrong key');
    const response = parseResponse(Buffer.from(raw, 'latin1'));
    await assertErrorAnswer(t, h, response, 401, 'unauthorized');
    t.equal(response.headers['connection'], 'close', 'the body may not have been sent: the connection closes');
  });

  await t.test('100 Continue comes only for a body within the limit', async (t) => {
    const { raw, sentBody } = await sendExpectingContinue(h.port, continueHead(h.key, 10_000_000, false), '');
    t.notOk(sentBody, 'no 100 Continue for a declared body over the limit');
    const response = parseResponse(Buffer.from(raw, 'latin1'));
    const error = await assertErrorAnswer(t, h, response, 413, 'payload_too_large');
    t.match(error['message'], /larger than \d+ bytes/);
  });

  await t.test('an admitted request gets 100 Continue, then its answer', async (t) => {
    const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
    const { raw, sentBody } = await sendExpectingContinue(h.port, continueHead(h.key, Buffer.byteLength(body)), body);
    t.ok(sentBody, '100 Continue arrived');
    const response = parseResponse(Buffer.from(raw.slice(raw.indexOf('\r\n\r\n') + 4), 'latin1'));
    t.equal(response.status, 201);
  });
});

t.test('CONNECT is a 405 Error object with a log line', async (t) => {
  const h = await startHostileApp(t);
  const response = await h.send('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
  const error = await assertErrorAnswer(t, h, response, 405, 'method_not_allowed');
  t.match(error['message'], /CONNECT is not served/);
  t.equal(response.headers['allow'], '', 'an empty Allow: the target is no resource here');
  t.equal(response.headers['connection'], 'close');
  const line = h.logLines().find((entry) => entry['requestId'] === response.headers['x-request-id']);
  t.equal(line?.['method'], 'CONNECT');
});
