import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { createMetrics } from '../../src/observability/metrics.js';
import { startMetricsServer } from '../../src/observability/metricsServer.js';
import { assertErrorAnswer, startHostileApp, untilLogged, type HostileApp } from './harness.js';

/** How long a wait on a condition may take: each holds within milliseconds, but a machine at load 40 can stall a process for seconds. */
const patienceMs = 30_000;
/**
 * A client that closes or resets its connection in the middle of a request
 * (its head or its body not all sent) gets nothing: no one is left to read
 * an answer. It is no answered 400, neither in the log nor in the request
 * metrics the objectives read; pets_abandoned_requests_total counts it. A
 * request that arrived whole but is not HTTP is still answered 400.
 */

const abandoned = 'pets_abandoned_requests_total';
const abandonedLine = (line: Record<string, unknown>) => line['msg'] === 'request abandoned by the client';

/** The sum of a metric's samples whose labels include all of these (a name alone: every series). */
function total(scrape: string, name: string, labels: string[] = []): number {
  let sum = 0;
  for (const line of scrape.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels.every((label) => line.includes(label))) sum += Number(line.split(' ').at(-1));
  }
  return sum;
}

/** What the objectives count as answered with 400: every request-duration series of status 400. */
const answered400 = (scrape: string) =>
  total(scrape, 'http_server_request_duration_seconds_count', ['status_code="400"']);

interface Scraped {
  h: HostileApp;
  /** GET /metrics on the app's own metrics listener. */
  scrape(): Promise<string>;
  /** Resolves once the server has read this many bytes on the connection of this client socket. */
  serverRead(client: Socket, bytes: number): Promise<void>;
}

async function startScrapedApp(t: Test): Promise<Scraped> {
  const metrics = createMetrics();
  const registry = metrics.registry;
  if (registry === undefined) throw new Error('createMetrics gave no registry');
  const h = await startHostileApp(t, { metrics });
  const accepted: Socket[] = [];
  h.app.server.on('connection', (socket: Socket) => accepted.push(socket));
  const listener = await startMetricsServer(
    '127.0.0.1',
    0,
    { contentType: registry.contentType, render: () => registry.metrics() },
    (error) => {
      t.fail(`the metrics listener failed: ${String(error)}`);
    },
  );
  t.teardown(listener.close);
  return {
    h,
    scrape: async () => {
      const response = await fetch(`${listener.address}/metrics`);
      return response.text();
    },
    serverRead: async (client, bytes) => {
      const started = Date.now();
      const read = () => accepted.find((socket) => socket.remotePort === client.localPort)?.bytesRead ?? 0;
      while (read() < bytes) {
        if (Date.now() - started > patienceMs) throw new Error(`the server read ${read()} of ${bytes} bytes`);
        await sleep(5);
      }
    },
  };
}

/** Scrapes until done(scrape) holds, for at most patienceMs; the last scrape either way. */
async function scrapeUntil(scraped: Scraped, done: (scrape: string) => boolean): Promise<string> {
  const started = Date.now();
  let scrape = await scraped.scrape();
  while (!done(scrape) && Date.now() - started < patienceMs) {
    await sleep(20);
    scrape = await scraped.scrape();
  }
  return scrape;
}

/** Resolves once the server has let go of every connection it held (its clientError ran before). */
async function serverHoldsNoConnection(h: HostileApp): Promise<void> {
  const started = Date.now();
  for (;;) {
    const count = await new Promise<number>((resolve, reject) => {
      h.app.server.getConnections((error, connections) => {
        if (error) reject(error);
        else resolve(connections);
      });
    });
    if (count === 0 || Date.now() - started > patienceMs) return;
    await sleep(20);
  }
}

/** A raw connection whose received bytes are kept; `closed` resolves when it has closed. */
async function openRaw(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const socket = connect({ host: '127.0.0.1', port });
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  const closed = once(socket, 'close').then(() => undefined);
  await once(socket, 'connect');
  return { socket, received: () => Buffer.concat(chunks).toString('latin1'), closed };
}

const partialHead = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Partial: abc';

const ways: [string, string, (socket: Socket) => void][] = [
  ['its head cut, then its end (FIN)', partialHead, (socket) => socket.end()],
  ['its head cut, then destroyed', partialHead, (socket) => socket.destroy()],
  ['its head cut, then reset (RST)', partialHead, (socket) => socket.resetAndDestroy()],
  [
    'its body cut (10 of 100 bytes), then its end',
    'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"x',
    (socket) => socket.end(),
  ],
];

t.test('a request its client abandons is counted as abandoned, never as an answered 400', async (t) => {
  const scraped = await startScrapedApp(t);
  const { h } = scraped;
  let expected = 0;
  for (const [name, bytes, leave] of ways) {
    await t.test(name, async (t) => {
      const before = await scraped.scrape();
      const connection = await openRaw(h.port);
      connection.socket.write(bytes);
      // Read by the server before the client leaves (a reset may otherwise drop them unread).
      await scraped.serverRead(connection.socket, Buffer.byteLength(bytes));
      leave(connection.socket);
      await connection.closed;
      expected += 1;
      const after = await scrapeUntil(scraped, (scrape) => total(scrape, abandoned) >= expected);
      t.equal(total(after, abandoned), total(before, abandoned) + 1, `${abandoned} moves by 1`);
      t.equal(answered400(after), answered400(before), 'no answered 400 in the request metrics');
      t.equal(connection.received(), '', 'nothing was sent to it');
    });
  }
  const lines = await untilLogged(h, abandonedLine, ways.length);
  t.equal(lines.length, ways.length, 'one log line each');
  for (const line of lines) {
    t.equal(line['status'], null, 'the log line has no status: nothing was answered');
    t.equal(line['level'], 30);
    t.type(line['durationMs'], 'number');
  }
  t.match(lines[0], { method: null, errorCode: 'HPE_INVALID_EOF_STATE' });
  t.match(lines.at(-1), { method: 'POST', path: '/v1/pets' });
  t.notOk(
    h.logLines().some((line) => line['status'] === 400 || line['msg'] === 'request cut before routing'),
    'no line says 400 or that the request was cut and answered',
  );
  t.notOk(h.logText().includes('X-Partial'), 'no raw request bytes in the log');
});

t.test('a connection reset between requests abandons none', async (t) => {
  const scraped = await startScrapedApp(t);
  const { h } = scraped;
  const connection = await openRaw(h.port);
  connection.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  while (!connection.received().includes('\r\n\r\n')) await once(connection.socket, 'data');
  t.match(connection.received(), /^HTTP\/1\.1 200 /, 'the request before is answered');
  connection.socket.resetAndDestroy();
  await connection.closed;
  await serverHoldsNoConnection(h);
  const scrape = await scraped.scrape();
  t.equal(total(scrape, abandoned), 0, `${abandoned} stays 0`);
  t.equal(answered400(scrape), 0);
  t.notOk(h.logLines().some(abandonedLine));
});

t.test('a whole request that is not HTTP is still answered 400 and counted so', async (t) => {
  const scraped = await startScrapedApp(t);
  const { h } = scraped;

  await t.test('a header line without a colon', async (t) => {
    const before = await scraped.scrape();
    const response = await h.send('GET /v1/pets HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n');
    await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    const after = await scrapeUntil(scraped, (scrape) => answered400(scrape) > answered400(before));
    t.equal(answered400(after), answered400(before) + 1, 'one answered 400');
    t.equal(total(after, abandoned), total(before, abandoned), `not in ${abandoned}`);
  });

  await t.test('a bad method, its client ending its side at once: the 400 still reaches it', async (t) => {
    const before = await scraped.scrape();
    const connection = await openRaw(h.port);
    connection.socket.end('G@T /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n');
    await connection.closed;
    const response = connection.received();
    t.match(response, /^HTTP\/1\.1 400 /, 'answered 400');
    t.match(response, /\r\nx-request-id: \S+/i, 'with X-Request-Id');
    const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    t.same(Object.keys(body).sort(), ['code', 'message', 'status'], 'the Error object');
    t.equal(body['status'], 400);
    const after = await scrapeUntil(scraped, (scrape) => answered400(scrape) > answered400(before));
    t.equal(answered400(after), answered400(before) + 1, 'one answered 400');
    t.equal(total(after, abandoned), total(before, abandoned), `not in ${abandoned}`);
  });
});
