import t from 'tap';
import { createMetrics, type ServiceMetrics } from '../../src/observability/metrics.js';
import { parseResponse, exchange, startHostileApp, untilLogged } from './harness.js';
import { RawConnection } from './rawConnection.js';

/**
 * Requests Node's parser cuts before any route answers them (408 for a body
 * too slow, 400 for what is not HTTP, 431 for headers too large) are logged
 * and counted like every other answer: one line each, and the request
 * metrics under operation="(cut before routing)". A slow body refused for
 * its missing key was never answered 401: it is no authentication failure.
 */

const cutLabel = 'operation="(cut before routing)"';

async function sampleOf(metrics: ServiceMetrics, name: string, labels: string[]): Promise<number> {
  const text = (await metrics.registry?.metrics()) ?? '';
  const line = text
    .split('\n')
    .find((entry) => entry.startsWith(`${name}{`) && labels.every((label) => entry.includes(label)));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

const durationCount = (metrics: ServiceMetrics, method: string, status: number) =>
  sampleOf(metrics, 'http_server_request_duration_seconds_count', [
    cutLabel,
    `method="${method}"`,
    `status_code="${status}"`,
  ]);

t.test('slow bodies cut with 408: logged, counted, and no authentication failure', async (t) => {
  const metrics = createMetrics();
  // A short request timeout, so that the cut comes soon; Node checks it every quarter of the headers timeout.
  const h = await startHostileApp(t, { metrics, limits: { requestTimeoutMs: 1500, headersTimeoutMs: 1000 } });
  const senders = 5;
  const connections = await Promise.all(Array.from({ length: senders }, () => RawConnection.open(h.port)));
  t.teardown(() => {
    for (const connection of connections) connection.destroy();
  });
  for (const connection of connections) {
    // No key, 100 bytes announced, 10 sent: the 401 waits for the rest of the body, which never comes.
    connection.write(
      'POST /v1/pets?secret=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Content-Length: 100\r\n\r\n{"name":"x`,
    );
  }
  const answers = await Promise.all(connections.map((connection) => connection.answer()));
  t.same(
    answers.map((answer) => answer.status),
    Array(senders).fill(408),
    'each is cut with 408',
  );
  const lines = await untilLogged(h, (line) => line['msg'] === 'request cut before routing', senders);
  t.equal(lines.length, senders, 'one log line each');
  t.match(lines[0], {
    level: 30,
    method: 'POST',
    route: null,
    path: '/v1/pets',
    status: 408,
    errorCode: 'ERR_HTTP_REQUEST_TIMEOUT',
  });
  t.type(lines[0]?.['durationMs'], 'number');
  t.equal(await durationCount(metrics, 'POST', 408), senders, 'counted in the request metrics');
  t.equal(
    await sampleOf(metrics, 'pets_authentication_failures_total', ['reason="missing"']),
    0,
    'not as authentication failures: no 401 was sent',
  );

  // The 401 that is sent still counts.
  const refused = await h.send('GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  t.equal(refused.status, 401);
  t.equal(await sampleOf(metrics, 'pets_authentication_failures_total', ['reason="missing"']), 1);
});

t.test('what is not HTTP (400) and headers too large (431): logged and counted', async (t) => {
  const metrics = createMetrics();
  const h = await startHostileApp(t, { metrics });
  const garbage = parseResponse(await exchange(h.port, ['HELLO THERE\r\n\r\n']));
  t.equal(garbage.status, 400);
  const huge = parseResponse(
    await exchange(h.port, [`GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]),
  );
  t.equal(huge.status, 431);
  const lines = await untilLogged(h, (line) => line['msg'] === 'request cut before routing', 2);
  t.same(
    lines.map((line) => [line['status'], line['requestId']]),
    [
      [400, garbage.headers['x-request-id']],
      [431, huge.headers['x-request-id']],
    ],
    'one line each, under the request id the client got',
  );
  t.equal(await durationCount(metrics, 'unknown', 400), 1, 'the request line unread: method="unknown"');
  t.equal(await durationCount(metrics, 'unknown', 431), 1);
});
