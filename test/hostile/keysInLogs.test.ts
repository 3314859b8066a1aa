import t from 'tap';
import { generateApiKey } from '../../src/auth/keys.js';
import { exchange, rawRequest, startHostileApp, untilLogged } from './harness.js';

t.test('no key reaches the log at LOG_LEVEL=trace, whatever the request', async (t) => {
  const h = await startHostileApp(t, { LOG_LEVEL: 'trace', limits: { headersTimeoutMs: 500 } });
  const wrongKey = generateApiKey();
  const requests: [string, string | Buffer][] = [];
  for (const key of [h.key, wrongKey]) {
    const auth = `Authorization: Bearer ${key}\r\n`;
    requests.push(
      ['a good request', rawRequest('GET /v1/pets HTTP/1.1', { Authorization: `Bearer ${key}` })],
      ['garbage after the key', `GET /v1/pets HTTP/1.1\r\nHost: x\r\n${auth}no colon\r\n\r\n`],
      ['headers too large after the key', `GET /v1/pets HTTP/1.1\r\n${auth}X-Big: ${'y'.repeat(20000)}\r\n\r\n`],
      ['an invalid method before the key', `G@T /v1/pets HTTP/1.1\r\n${auth}\r\n`],
      ['a bad chunk after the key', `POST /v1/pets HTTP/1.1\r\n${auth}Transfer-Encoding: chunked\r\n\r\nzz\r\n`],
      ['a bad URL with the key', `GET /v1/pets/%zz HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`],
      ['the key twice', `GET /v1/pets HTTP/1.1\r\nHost: x\r\n${auth}${auth}Connection: close\r\n\r\n`],
      ['the key in another scheme', rawRequest('GET /v1/pets HTTP/1.1', { Authorization: `Basic ${key}` })],
      [
        'the key in a bad JSON body',
        rawRequest(
          'POST /v1/pets HTTP/1.1',
          { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
          `{"name":"${key}",`,
        ),
      ],
      ['headers that never end, after the key', `GET /v1/pets HTTP/1.1\r\n${auth}X-Slow: 1\r\n`],
    );
  }
  for (const [label, request] of requests) {
    const raw = await exchange(h.port, [request]);
    t.ok(raw.length > 0, `${label}: answered`);
  }
  // A line per request, each with its request id (the start's own lines have none).
  const requestLines = await untilLogged(h, (line) => typeof line['requestId'] === 'string', requests.length);
  const text = h.logText();
  t.ok(requestLines.length >= requests.length, `${requestLines.length} request lines written`);
  for (const key of [h.key, wrongKey]) {
    const secret = key.slice(key.indexOf('_') + 1);
    t.notOk(text.includes(secret), 'no whole key');
    for (let start = 0; start + 12 <= secret.length; start += 6) {
      if (text.includes(secret.slice(start, start + 12))) t.fail(`a 12-character piece of a key is in the log`);
    }
    // The raw bytes Node attaches to a parser error would be an array of byte values.
    const asBytes = Array.from(Buffer.from(secret.slice(0, 8))).join(',');
    t.notOk(text.includes(asBytes), 'not even as raw bytes');
  }
  t.notOk(text.includes('rawPacket'), 'no rawPacket field at all');
});
