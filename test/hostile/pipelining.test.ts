import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { maxUnansweredPerConnection } from '../../src/http/server/connections.js';
import { exchange, parseResponse, startHostileApp, untilLogged } from './harness.js';

/** One request on a new connection: its status and how long the answer took. */
function timedGet(port: number, path: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  return new Promise<{ status: number; ms: number }>((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, headers, agent: false }, (response) => {
      response.resume();
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, ms: performance.now() - started });
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

// The attack, scaled down: eight connections, each writing this many
// pipelined GET /v1/pets without a key and never reading. Without a bound
// this froze an instance for seconds; with one, a connection costs at most
// the one chunk Node parses before its reading stops.
const connections = 8;
const requestsEach = 6000;
const probeWindowMs = 2500;

t.test('pipelining without reading does not freeze the instance', async (t) => {
  // Stack traces resolved through source maps (tsx, tap) cost far more than in production.
  const sourceMaps = process.sourceMapsEnabled;
  process.setSourceMapsEnabled(false);
  t.teardown(() => {
    process.setSourceMapsEnabled(sourceMaps);
  });
  const h = await startHostileApp(t, { RATE_LIMIT_MAX: 300 });
  const auth = { authorization: `Bearer ${h.key}` };
  // The schemas compile soon after listening; let that finish first.
  await timedGet(h.port, '/v1/pets', auth);
  t.equal((await untilLogged(h, (line) => line['msg'] === 'schemas compiled')).length, 1, 'the warm-up ended');

  await t.test('a client that pipelines within the depth gets every answer', async (t) => {
    const one = `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.key}\r\n\r\n`;
    const last = one.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n');
    const raw = (await exchange(h.port, [one.repeat(maxUnansweredPerConnection - 1) + last])).toString('latin1');
    const statuses = [...raw.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => Number(match[1]));
    t.same(
      statuses,
      Array.from({ length: maxUnansweredPerConnection }, () => 200),
    );
  });

  const cpuBefore = process.cpuUsage();
  const attackers: Socket[] = [];
  const closed: Promise<void>[] = [];
  for (let index = 0; index < connections; index += 1) {
    const socket = connect(h.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.pause();
    closed.push(
      new Promise((resolve) =>
        socket.on('close', () => {
          resolve();
        }),
      ),
    );
    socket.write('GET /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(requestsEach));
    attackers.push(socket);
  }
  t.teardown(() => {
    for (const socket of attackers) socket.destroy();
  });

  const probes: number[] = [];
  let keyed: number | undefined;
  let probingUntil = Infinity;
  while (performance.now() < probingUntil) {
    const probe = await timedGet(h.port, '/healthz');
    t.equal(probe.status, 200, 'healthz answers');
    probes.push(probe.ms);
    if (probingUntil === Infinity) {
      probingUntil = performance.now() + probeWindowMs;
      const cpu = process.cpuUsage(cpuBefore);
      t.comment(`CPU time until the first probe was answered: ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`);
    }
    keyed ??= (await timedGet(h.port, '/v1/pets', auth)).status;
    await sleep(20);
  }
  const sorted = [...probes].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Infinity;
  t.comment(
    `healthz during the attack: ${probes.length} probes, median ${median.toFixed(0)} ms, first ${(probes[0] ?? 0).toFixed(0)} ms, slowest ${(sorted.at(-1) ?? 0).toFixed(0)} ms`,
  );
  // The first probe waits for what the attack costs before it is bounded:
  // without the bound, the whole queue (seconds, growing with requestsEach);
  // with it, the one chunk per connection Node parses before its reading
  // stops (a fixed cost: tens of ms on a quiet machine, more on a loaded
  // one). The probes after it must be answered at once. The count of
  // requests the app ran is the exact check.
  // A ceiling a busy machine stays under (the queue an unbounded attack leaves takes seconds to drain).
  t.ok(median < 1000, `healthz within a second (median ${median.toFixed(0)} ms)`);
  const ran = h.logLines().filter((line) => line['msg'] === 'request completed' && line['status'] === 401);
  t.ok(
    ran.length <= connections * maxUnansweredPerConnection,
    `the app ran at most ${maxUnansweredPerConnection} requests per connection (${ran.length} in all)`,
  );
  t.equal(keyed, 200, 'another client is served during the attack');

  // What an attacker reads: the answers to its first requests, then the
  // refusal of the next, and the connection closed.
  const first = attackers[0] as Socket;
  const chunks: Buffer[] = [];
  first.on('data', (chunk: Buffer) => chunks.push(chunk));
  for (const socket of attackers) socket.resume();
  await Promise.all(closed);
  const text = Buffer.concat(chunks).toString('latin1');
  t.equal(text.split('HTTP/1.1 ').length - 1, maxUnansweredPerConnection + 1, 'the first requests answered, then one');
  const refusal = parseResponse(Buffer.from(text.slice(text.lastIndexOf('HTTP/1.1 ')), 'latin1'));
  t.equal(refusal.status, 429);
  t.equal(refusal.headers['connection'], 'close');
  t.same(JSON.parse(refusal.body), {
    code: 'rate_limited',
    message: `At most ${maxUnansweredPerConnection} requests may wait for their answers on one connection; read the answers before sending more. This connection is closed.`,
    status: 429,
  });
  t.match(refusal.headers['x-request-id'], /^[0-9a-f-]{36}$/);
  t.equal(refusal.headers['x-content-type-options'], 'nosniff');
  const refusals = h
    .logLines()
    .filter((line) => line['msg'] === 'request refused: too many unanswered requests on its connection');
  t.equal(refusals.length, connections, 'one log line per refused connection');
  t.equal(refusals[0]?.['status'], 429);
  t.ok(
    refusals.some((line) => line['requestId'] === refusal.headers['x-request-id']),
    'the refusal is logged under its request id',
  );
});
