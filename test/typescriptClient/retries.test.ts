import t from 'tap';
import { PetStore } from '../../clients/typescript/src/index.js';
import { waitUntil } from '../../lib/instances/processes.js';
import { postgresUnavailableReason } from '../helpers/databases.js';
import { startDroppingProxy } from '../helpers/droppingProxy.js';
import { startRewritingProxy } from '../helpers/httpProxy.js';
import { countPets, recordingFetch, serveApp } from '../helpers/typescriptClient.js';

// The retry loop of the TypeScript client, proven against the running service.

// libuv measures a timer from the event loop's cached time, which a busy process reads late: against
// Date.now() a timer may fire a little early.
const timerSlackMs = 50;

// The service as it runs normally, for the tests that need nothing else of it.
const plain = await serveApp(t);

t.test('a 429 is waited out for as long as Retry-After says, and the call succeeds', async (t) => {
  const { baseUrl, key } = await serveApp(t, { RATE_LIMIT_MAX: 2, RATE_LIMIT_WINDOW_SECONDS: 1 });
  const { fetch, sent } = recordingFetch();
  const client = new PetStore({ baseUrl, apiKey: key, fetch });
  for (let call = 0; call < 4; call++) t.same(await client.listPets(), [], `call ${call + 1} answered`);
  const statuses = sent.map((entry) => entry.status);
  const limited = statuses.indexOf(429);
  t.ok(limited >= 0, `the service limited a call (${statuses.join(', ')})`);
  const retryAfter = Number(sent[limited]!.answerHeaders!.get('retry-after'));
  t.ok(retryAfter >= 1, `with Retry-After: ${retryAfter}`);
  const retried = sent[limited + 1]!;
  t.equal(retried.url, sent[limited]!.url, 'the same request was sent again');
  const waited = retried.at - sent[limited]!.at;
  t.ok(waited >= retryAfter * 1000 - timerSlackMs, `not before Retry-After (${waited} ms)`);
  t.equal(statuses.filter((status) => status === 200).length, 4, 'four calls, four answers');
});

t.test('a 503 while the service is starting is retried until it is ready', async (t) => {
  let ready!: () => void;
  const databaseReady = new Promise<void>((resolve) => (ready = resolve));
  const { baseUrl, key } = await serveApp(t, {}, { databaseReady });
  const { fetch, sent } = recordingFetch();
  const client = new PetStore({ baseUrl, apiKey: key, fetch });
  const listed = client.listPets();
  // Ready once the first attempt has met the gate.
  await waitUntil({ what: 'the first answer', timeoutMs: 30_000, intervalMs: 5 }, () =>
    Promise.resolve(sent[0]?.status === undefined ? undefined : true),
  );
  ready();
  t.same(await listed, []);
  t.equal(sent[0]!.status, 503, 'the first attempt met the start-up gate');
  t.equal(sent.at(-1)!.status, 200, 'a retry got the answer');
  t.ok(sent.at(-1)!.at - sent[0]!.at >= 1000 - timerSlackMs, "after the gate's Retry-After: 1");
});

t.test('Retry-After as an HTTP-date is honoured; one past the cap is not waited for', async (t) => {
  let ready!: () => void;
  const { origin, key } = await serveApp(t, {}, { databaseReady: new Promise<void>((resolve) => (ready = resolve)) });
  t.teardown(() => {
    ready();
  });
  // The start-up gate's 503, with its Retry-After rewritten: a date 2 s ahead, or 120 s (past the 60 s cap).
  let retryAfter = () => new Date(Math.ceil(Date.now() / 1000) * 1000 + 2000).toUTCString();
  const proxy = await startRewritingProxy(origin, (response) => {
    if (response.status === 503) ready();
    return { ...response, headers: { ...response.headers, 'retry-after': retryAfter() } };
  });
  t.teardown(proxy.close);
  const { fetch, sent } = recordingFetch();
  const client = new PetStore({ baseUrl: `${proxy.url}/v1`, apiKey: key, fetch });
  t.same(await client.listPets(), []);
  const [limited, retried] = sent;
  const until = Date.parse(limited!.answerHeaders!.get('retry-after')!);
  t.equal(limited!.status, 503);
  t.ok(
    retried!.at >= until - timerSlackMs,
    `not before ${new Date(until).toISOString()} (${until - retried!.at} ms early)`,
  );

  let readyAgain!: () => void;
  const starting = await serveApp(t, {}, { databaseReady: new Promise<void>((resolve) => (readyAgain = resolve)) });
  t.teardown(() => {
    readyAgain();
  });
  retryAfter = () => '120';
  const capped = await startRewritingProxy(starting.origin, (response) => ({
    ...response,
    headers: { ...response.headers, 'retry-after': retryAfter() },
  }));
  t.teardown(capped.close);
  sent.length = 0;
  const started = Date.now();
  // A deadline far off: what stops the retry is the cap alone.
  const cappedClient = new PetStore({ baseUrl: `${capped.url}/v1`, apiKey: starting.key, fetch, timeoutMs: 600_000 });
  await t.rejects(cappedClient.listPets(), { status: 503, code: 'service_unavailable' });
  t.equal(sent.length, 1, 'not retried sooner than the service asked');
  t.ok(Date.now() - started < 1000, 'and thrown at once');
});

t.test('a createPet whose answer is lost is retried with the same key and adds one pet', async (t) => {
  const { origin, key, db } = plain;
  // The service commits the first POST; its client sees a reset connection instead of the 201.
  const proxy = await startDroppingProxy(origin, (_, index) => index === 0);
  t.teardown(proxy.close);
  const client = new PetStore({ baseUrl: `${proxy.url}/v1`, apiKey: key });
  const pet = await client.createPet({ name: 'Lost-Answer', categoryId: 3 });
  t.match(pet, { name: 'Lost-Answer', categoryId: 3, status: 'available' });
  const [first, retry] = proxy.exchanges;
  t.equal(proxy.exchanges.length, 2, 'one retry');
  t.ok(first!.dropped && first!.status === 201, 'the first attempt was committed, and its answer dropped');
  const sentKey = first!.headers['idempotency-key'];
  t.match(sentKey, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a generated UUID key');
  t.equal(retry!.headers['idempotency-key'], sentKey, 'sent unchanged on the retry');
  t.equal(retry!.status, 201);
  t.equal(await countPets(db, 'Lost-Answer'), 1, 'exactly one pet in the database');

  const second = await client.createPet({ name: 'Lost-Answer', categoryId: 3 }, { idempotencyKey: 'order-77' });
  t.not(second.id, pet.id, 'each call is a creation of its own');
  t.equal(proxy.exchanges.at(-1)!.headers['idempotency-key'], 'order-77', "the caller's key is sent as given");
});

// PostgreSQL runs the requests at once, so that most find the key in use (PGlite runs them one by one).
const postgresMissing = await postgresUnavailableReason();
t.test(
  'concurrent calls with one key all get the one pet (409 in use is waited out)',
  postgresMissing ? { skip: postgresMissing } : {},
  async (t) => {
    const { baseUrl, key, db } = await serveApp(t, {}, {}, 'postgres');
    const { fetch, sent } = recordingFetch();
    const client = new PetStore({ baseUrl, apiKey: key, fetch, maxRetries: 8 });
    const calls = 20;
    const pets = await Promise.all(
      Array.from({ length: calls }, () =>
        client.createPet({ name: 'Same-Key', categoryId: 4 }, { idempotencyKey: 'k-1' }),
      ),
    );
    t.equal(new Set(pets.map((pet) => pet.id)).size, 1, 'one pet for every call');
    t.equal(await countPets(db, 'Same-Key'), 1);
    const inUse = sent.filter((entry) => entry.status === 409).length;
    t.ok(inUse > 0, `${inUse} answers were 409 idempotency_key_in_use, and retried`);
  },
);

t.test('a connection error is retried for a GET', async (t) => {
  const { origin, key } = plain;
  const proxy = await startDroppingProxy(origin, (_, index) => index < 2);
  t.teardown(proxy.close);
  const client = new PetStore({ baseUrl: `${proxy.url}/v1`, apiKey: key });
  t.same(await client.listPets({ status: 'sold' }), []);
  t.equal(proxy.exchanges.length, 3, 'two resets, then the answer');
});

t.test('maxRetries bounds the attempts, and then the connection error is thrown', async (t) => {
  const { origin, key } = plain;
  const proxy = await startDroppingProxy(origin, () => true);
  t.teardown(proxy.close);
  const client = new PetStore({ baseUrl: `${proxy.url}/v1`, apiKey: key, maxRetries: 1 });
  await t.rejects(client.listPets(), TypeError, "fetch's own error for a lost connection");
  t.equal(proxy.exchanges.length, 2, 'one attempt and one retry');
});
