import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { PetStore, PetStoreError } from '../../clients/typescript/src/index.js';
import { waitUntil } from '../../lib/instances/processes.js';
import { recordingFetch, serveApp, type Sent } from '../helpers/typescriptClient.js';

// Per-call deadlines (timeoutMs) and the caller's AbortSignal, against the running service.

/** A server that takes connections and never answers: a service stuck mid-request. */
async function silentServer(t: Test): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}/v1`;
}

// libuv measures a timer from the event loop's cached time, which a busy process reads late: against
// Date.now() a timer may fire a little early.
const timerSlackMs = 50;

/** A ceiling for what should take milliseconds, generous enough for a busy machine. */
const ceilingMs = 30_000;

/** Once `sent` holds an attempt that `ready` accepts (sent, or answered). */
async function attempted(sent: Sent[], ready: (attempt: Sent) => boolean): Promise<void> {
  await waitUntil({ what: 'the first attempt', timeoutMs: ceilingMs, intervalMs: 5 }, () =>
    Promise.resolve(sent.some(ready) ? true : undefined),
  );
}

// The service, held at its start-up gate (503 with Retry-After: 1) until the tests end.
let ready!: () => void;
const starting = await serveApp(t, {}, { databaseReady: new Promise<void>((resolve) => (ready = resolve)) });
t.teardown(() => {
  ready();
});

/** What a call threw, and how long it took: the clock is read before the call starts its timers. */
async function outcome(begin: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  const error = await begin().then(
    () => undefined,
    (error: unknown) => error,
  );
  return { error, ms: Date.now() - started };
}

t.test('a call that gets no answer ends at its deadline with a TimeoutError, not retried', async (t) => {
  const baseUrl = await silentServer(t);
  const { fetch, sent } = recordingFetch();
  const timeoutMs = 400;
  const client = new PetStore({ baseUrl, apiKey: 'pets_x', fetch, timeoutMs });
  const { error, ms } = await outcome(() => client.listPets());
  t.match(error, { name: 'TimeoutError', message: /timeoutMs \(400 ms\)/ });
  t.ok(error instanceof DOMException, 'a DOMException, as AbortSignal.timeout gives');
  // The server never answers: without the deadline the call would never end.
  t.ok(ms >= timeoutMs - timerSlackMs && ms < ceilingMs, `at the deadline (${ms} ms)`);
  t.equal(sent.length, 1, 'the deadline covers the call: no attempt after it');
});

t.test('retries stop before the deadline: a wait that would pass it is not started', async (t) => {
  const { baseUrl, key } = starting;
  const { fetch, sent } = recordingFetch();
  // Retry-After: 1 fits two retries into 3 s; the third wait would end past the deadline.
  const client = new PetStore({ baseUrl, apiKey: key, fetch, timeoutMs: 3000, maxRetries: 10 });
  const { error, ms } = await outcome(() => client.listPets());
  t.match(error, { status: 503, code: 'service_unavailable' }, "the last answer's error, not a timeout");
  t.ok(error instanceof PetStoreError, `after ${sent.length} attempts, ${ms} ms`);
  t.ok(sent.length >= 2, 'retried while the deadline allowed');
});

t.test("the caller's AbortSignal cancels an attempt in flight, and the call is not retried", async (t) => {
  const baseUrl = await silentServer(t);
  const { fetch, sent } = recordingFetch();
  const client = new PetStore({ baseUrl, apiKey: 'pets_x', fetch });
  const controller = new AbortController();
  const call = outcome(() => client.createPet({ name: 'Rex', categoryId: 3 }, { signal: controller.signal }));
  await attempted(sent, () => true);
  const abortedAt = Date.now();
  controller.abort();
  const { error } = await call;
  const ms = Date.now() - abortedAt;
  t.match(error, { name: 'AbortError' });
  // The server never answers: only the abort ends the call before its 60 s default deadline.
  t.ok(ms < ceilingMs, `promptly after the abort (${ms} ms)`);
  t.equal(sent.length, 1);
});

t.test("the caller's AbortSignal cancels a retry's wait, with the caller's reason", async (t) => {
  const { baseUrl, key } = starting;
  const { fetch, sent } = recordingFetch();
  const client = new PetStore({ baseUrl, apiKey: key, fetch });
  const controller = new AbortController();
  const reason = new Error('the user left the page');
  const call = outcome(() => client.listPets({}, { signal: controller.signal }));
  // Aborted once the first answer (503, Retry-After: 1) is in: the client is waiting to retry.
  await attempted(sent, (attempt) => attempt.status !== undefined);
  const abortedAt = Date.now();
  controller.abort(reason);
  const { error } = await call;
  const ms = Date.now() - abortedAt;
  t.equal(error, reason, "the signal's reason is thrown as it is");
  t.ok(ms < 1000 - timerSlackMs, `without waiting out Retry-After: 1 (${ms} ms after the abort)`);
  t.equal(sent.length, 1, 'no attempt after the abort');

  const { error: already } = await outcome(() => client.listPets({}, { signal: AbortSignal.abort() }));
  t.match(already, { name: 'AbortError' });
  t.equal(sent.length, 1, 'an aborted signal sends nothing');
});
