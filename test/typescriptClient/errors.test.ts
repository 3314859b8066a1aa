// getPet is deprecated; these tests call it on purpose.
/* eslint-disable @typescript-eslint/no-deprecated */
import t from 'tap';
import { PetStore, PetStoreError, type DeprecationNotice } from '../../clients/typescript/src/index.js';
import { startRewritingProxy } from '../helpers/httpProxy.js';
import { recordingFetch, serveApp } from '../helpers/typescriptClient.js';

// PetStoreError and deprecation notices, from the running service's answers.

async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => undefined,
    (error: unknown) => error,
  );
}

const requestIdPattern = /^[A-Za-z0-9._:-]+$/;

// One service for every test here, on a clock a test may move past getPet's sunset (and back).
const beforeSunset = Date.parse('2026-12-01T00:00:00Z');
let clock = beforeSunset;
const served = await serveApp(t, {}, { now: () => clock });

t.test('error answers are PetStoreErrors with status, code, message and request id, never retried', async (t) => {
  const { baseUrl, key } = served;
  const { fetch, sent } = recordingFetch();
  const client = new PetStore({ baseUrl, apiKey: key, fetch, onDeprecation: () => undefined });

  const unauthorized = await failure(new PetStore({ baseUrl, apiKey: 'pets_wrong', fetch }).listPets());
  t.ok(PetStoreError.is(unauthorized, 'listPets'));
  t.match(unauthorized, { name: 'PetStoreError', status: 401, code: 'unauthorized', requestId: requestIdPattern });
  t.equal((unauthorized as PetStoreError).requestId, sent[0]!.answerHeaders!.get('x-request-id'), 'X-Request-Id');

  const invalid = await failure(client.createPet({ name: '', categoryId: 3 }));
  t.match(invalid, { status: 400, code: 'invalid_request', message: /name/ });
  t.ok(PetStoreError.is(invalid, 'createPet'));
  t.notOk(PetStoreError.is(invalid, 'listPets'), 'narrowed to the operation that failed');
  // @ts-expect-error createPet declares no 404: the narrowed status says so at compile time
  t.notOk(PetStoreError.is(invalid, 'createPet') && invalid.status === 404);

  const missing = await failure(client.getPet(424242));
  t.match(missing, { status: 404, code: 'not_found', operation: 'getPet' });

  await client.createPet({ name: 'Rex', categoryId: 3 }, { idempotencyKey: 'once' });
  const reused = await failure(client.createPet({ name: 'Tom', categoryId: 3 }, { idempotencyKey: 'once' }));
  t.match(reused, { status: 422, code: 'idempotency_key_reused' });
  if (PetStoreError.is(reused, 'createPet') && reused.status === 422) {
    // The status narrows the code, at compile time.
    const code: 'idempotency_key_in_use' | 'idempotency_key_reused' = reused.code;
    t.equal(code, 'idempotency_key_reused');
  }
  t.equal(sent.length, 5, 'one request per call: none of these is retried');
});

t.test('an answer the contract does not declare is an unexpected_response', async (t) => {
  const { origin, key } = served;
  // A gateway's page instead of the service's answer; a declared status without the Error object.
  for (const [status, body] of [
    [502, '<html>Bad Gateway</html>'],
    [400, '<html>Bad Request</html>'],
  ] as const) {
    const proxy = await startRewritingProxy(origin, () => ({ status, headers: { 'content-type': 'text/html' }, body }));
    t.teardown(proxy.close);
    const client = new PetStore({ baseUrl: `${proxy.url}/v1`, apiKey: key, maxRetries: 1 });
    const error = await failure(client.listPets());
    t.ok(error instanceof PetStoreError);
    t.match(error, { status, code: 'unexpected_response' });
    t.notOk(PetStoreError.is(error, 'listPets'), `${status}: not one of the errors the contract declares`);
  }
});

t.test('getPet: onDeprecation once, then after the sunset a 410 that names the successor', async (t) => {
  const { baseUrl, origin, key } = served;
  t.teardown(() => {
    clock = beforeSunset;
  });
  const notices: DeprecationNotice[] = [];
  const client = new PetStore({ baseUrl, apiKey: key, onDeprecation: (notice) => notices.push(notice) });
  const pet = await client.createPet({ name: 'Rex', categoryId: 3 });
  t.same(await client.getPet(pet.id), pet);
  t.same(await client.getPet(pet.id), pet);
  await failure(client.getPet(999_999));
  t.equal(notices.length, 1, 'once per operation');
  t.match(notices[0], {
    operation: 'getPet',
    deprecatedAt: new Date('2026-11-21T00:00:00Z'),
    sunset: new Date('2030-12-05T00:00:00Z'),
    successor: `${origin}/v1/pets?id=${pet.id}`,
    documentation: `${origin}/docs#/pets/getPet`,
  });

  clock = Date.parse('2030-12-05T00:00:01Z');
  const gone = await failure(client.getPet(pet.id));
  t.ok(PetStoreError.is(gone, 'getPet'));
  t.match(gone, { status: 410, code: 'gone', successor: `${origin}/v1/pets?id=${pet.id}` });
  t.match((gone as Error).message, `successor: ${origin}/v1/pets?id=${pet.id}`, 'the message says where to go');
  t.same(await client.listPets({ id: [pet.id] }), [pet], 'and the successor answers');
});

t.test('by default, a deprecation is one console.warn', async (t) => {
  const { baseUrl, key } = served;
  const warnings: unknown[][] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args);
  t.teardown(() => {
    console.warn = warn;
  });
  const client = new PetStore({ baseUrl, apiKey: key });
  const pet = await client.createPet({ name: 'Rex', categoryId: 3 });
  await client.getPet(pet.id);
  await client.getPet(pet.id);
  await client.listPets();
  t.equal(warnings.length, 1);
  t.match(
    String(warnings[0]?.[0]),
    /getPet is deprecated; it stops working on Thu, 05 Dec 2030 00:00:00 GMT; use http/,
  );
});
