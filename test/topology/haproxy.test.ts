import { rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import t from 'tap';
import { startHaproxy, waitUntil } from '../../lib/instances/index.js';
import { deepFolder, topologyTestOptions } from './harness.js';

/**
 * deploy/haproxy.cfg on its own, in front of three small HTTP servers that
 * misbehave on purpose: which requests are retried on another instance, and
 * how fast a failing /readyz takes an instance out of rotation. And a broken
 * configuration, at a deep path, reported in HAProxy's own words.
 */

interface Backend {
  server: Server;
  port: number;
  /** Requests that reached it (health checks apart), as "METHOD path". */
  seen: string[];
  /** What /readyz answers. */
  ready: boolean;
}

/** An HTTP server whose /readyz answers 200 (or 503); `onRequest` answers the rest. */
async function backend(
  onRequest: (self: Backend, request: IncomingMessage, response: ServerResponse) => void,
): Promise<Backend> {
  const self: Backend = { server: createServer(), port: 0, seen: [], ready: true };
  self.server.on('request', (request, response) => {
    if (request.url === '/readyz') {
      response.writeHead(self.ready ? 200 : 503).end();
      return;
    }
    self.seen.push(`${request.method} ${request.url}`);
    request.resume();
    request.on('end', () => {
      onRequest(self, request, response);
    });
  });
  await new Promise<void>((resolve) => self.server.listen(0, '127.0.0.1', resolve));
  self.port = (self.server.address() as AddressInfo).port;
  return self;
}

const answer = (self: Backend, _request: unknown, response: ServerResponse) =>
  response.writeHead(200, { 'content-type': 'text/plain' }).end(`port ${self.port}`);
/** Closes the connection after reading the request, without a byte of answer: a crash mid-request. */
const hangUp = (_self: Backend, request: IncomingMessage) => request.socket.destroy();

t.test('deploy/haproxy.cfg', topologyTestOptions(), async (t) => {
  const crashing = await backend(hangUp);
  const healthy = [await backend(answer), await backend(answer)];
  const all = [crashing, ...healthy];
  t.teardown(() => Promise.all(all.map((item) => new Promise((resolve) => item.server.close(resolve)))));
  const haproxy = await startHaproxy({ servers: all.map((item) => `127.0.0.1:${item.port}`) });
  t.teardown(() => haproxy.remove());
  await haproxy.waitForAllUp();

  /** The status, or "closed" when HAProxy closed the connection without an answer. */
  const send = async (method: string, headers: Record<string, string> = {}): Promise<number | 'closed'> => {
    try {
      const response = await fetch(`${haproxy.origin}/pets`, {
        method,
        headers,
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      await response.text();
      return response.status;
    } catch {
      return 'closed';
    }
  };
  const reached = () => crashing.seen.length;

  await t.test('an empty response to GET is retried on another instance', async (t) => {
    // Round robin over three servers: of any three requests in a row, one goes to the crashing server first.
    const before = reached();
    const statuses: Array<number | 'closed'> = [await send('GET'), await send('GET'), await send('GET')];
    t.same(statuses, [200, 200, 200], 'every GET answered by a healthy instance');
    t.ok(reached() > before, 'the crashing instance did get one of them first');
  });

  await t.test('a POST without Idempotency-Key is never sent twice', async (t) => {
    const statuses: Array<number | 'closed'> = [];
    const before = reached();
    for (let index = 0; index < 6; index += 1)
      statuses.push(await send('POST', { 'content-type': 'application/json' }));
    const crashed = reached() - before;
    t.ok(crashed > 0, 'POSTs reached the crashing instance');
    // On a fresh client connection HAProxy answers 502; on a kept-alive one it
    // closes the connection without an answer, as the instance did.
    t.equal(
      statuses.filter((status) => status === 502 || status === 'closed').length,
      crashed,
      `each POST that reached it failed for the client (${statuses.join(', ')})`,
    );
    t.equal(
      healthy.flatMap((item) => item.seen).filter((line) => line.startsWith('POST')).length,
      6 - crashed,
      'no other instance got those: nothing was retried',
    );
  });

  await t.test('a POST with an Idempotency-Key is retried like a GET', async (t) => {
    const before = reached();
    const statuses: Array<number | 'closed'> = [];
    for (let index = 0; index < 3; index += 1)
      statuses.push(await send('POST', { 'content-type': 'application/json', 'idempotency-key': `key-${index}` }));
    t.ok(reached() > before, 'one keyed POST reached the crashing instance first');
    t.same(statuses, [200, 200, 200], 'and was answered by another instance');
  });

  await t.test('an instance whose /readyz fails leaves the rotation within inter x fall + timeout check', async (t) => {
    const leaving = healthy[0]!;
    leaving.ready = false;
    const startedAt = Date.now();
    await waitUntil({ what: 'HAProxy marking the instance down', timeoutMs: 15_000 }, async () => {
      const server = (await haproxy.servers()).find((entry) => entry.name === 'app2');
      return server?.status.startsWith('DOWN') ? true : undefined;
    });
    const tookMs = Date.now() - startedAt;
    t.comment(
      `marked down ${tookMs} ms after /readyz turned 503 (inter 1s x fall 2 + timeout check 1s = 3 s at most, plus one interval of phase)`,
    );
    // Generous bound: this machine is shared, checks may be late.
    t.ok(tookMs < 8_000, `marked down in ${tookMs} ms`);
    const before = leaving.seen.length;
    for (let index = 0; index < 6; index += 1) await send('GET');
    t.equal(leaving.seen.length, before, 'no request reaches it once it is down');
  });
});

t.test('an HAProxy configuration error is reported in its own words', topologyTestOptions(), async (t) => {
  const deep = deepFolder();
  t.teardown(() => {
    rmSync(deep.root, { recursive: true, force: true });
  });
  const configFile = join(deep.path, 'broken.cfg');
  writeFileSync(configFile, 'frontend pets\n    bind 127.0.0.1:1\n    no-such-keyword on\n');
  await t.rejects(
    startHaproxy({ servers: ['127.0.0.1:1'], configFile, parent: dirname(configFile) }),
    /no-such-keyword/,
    "the error names HAProxy's complaint, not only its exit status",
  );
});
