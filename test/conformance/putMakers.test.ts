import t from 'tap';
import { isSafe } from '../../lib/conformance/resources.js';
import { loadContract } from '../../lib/conformance/spec.js';
import { runVerification } from '../../scripts/verify/verify.js';
import { httpLimits } from '../../src/http/limits.js';
import { ContractClient } from './client.js';
import { ownersOperations, ownersStore, specWithOwners } from './ownersFixture.js';
import { existingResourceRequest } from './steps.js';
import { serveStore } from './storeServer.js';

/**
 * npm run verify against a deployment of a spec with owners made by PUT (./ownersFixture.ts), holding an
 * owner and a pet it did not make: it creates owners at ids it drew, create-only (If-None-Match: *), adopts
 * only pets it made, under owners it made, and never replaces or removes what was there before.
 */

const spec = specWithOwners();
const operations = loadContract(spec).operations.filter((operation) =>
  ownersOperations.includes(operation.operationId),
);
t.test('verify makes owners at ids it drew and touches nothing it did not make', async (t) => {
  const store = ownersStore();
  const before = [
    { operationId: 'putOwner', pathParams: { ownerId: 'someone-else' }, body: '{"name":"theirs"}' },
    { operationId: 'createPet', pathParams: {}, body: '{"name":"theirs","categoryId":1}' },
  ];
  for (const request of before) await store.send({ ...request, intent: 'before', query: [], headers: {} });
  store.sent.length = 0;
  const origin = await serveStore(t, operations, store);
  const findings = await runVerification({
    baseUrl: `${origin}/v1`,
    apiKey: 'k'.repeat(40),
    readOnly: false,
    maxRequests: 400,
    seed: 3,
    wait: () => Promise.resolve(),
    spec,
  });
  t.same(
    findings.failures.filter((failure) => failure.check === 'unsafe request to a resource the run did not make'),
    [],
    'no unsafe request was refused as foreign',
  );
  t.ok(store.seen.has('putOwner 201'), 'owners were made by PUT');
  t.ok(store.seen.has('putAdoption 201'), 'and adoptions under them');
  t.ok((findings.createdBy.get('putOwner') ?? 0) > 0, 'counted as made by putOwner');
  const unsafe = store.sent.filter((request) => {
    const operation = operations.find((candidate) => candidate.operationId === request.operationId)!;
    return !isSafe(operation);
  });
  const madeOwners = new Set(
    store.sent
      .filter((request) => request.operationId === 'putOwner' && request.headers['if-none-match'] === '*')
      .map((request) => request.pathParams['ownerId']),
  );
  t.same(
    unsafe.filter((request) => request.pathParams['ownerId'] === 'someone-else'),
    [],
    'no unsafe request named the owner made before the run',
  );
  t.same(
    unsafe
      .filter((request) => request.operationId === 'putAdoption')
      .filter((request) => request.pathParams['petId'] === '1'),
    [],
    'nor adopted the pet made before the run',
  );
  t.ok(madeOwners.size > 0, `create-only puts to drawn ids: ${[...madeOwners].join(', ')}`);
  const replaced = unsafe.filter(
    (request) =>
      request.operationId === 'putOwner' &&
      request.headers['if-none-match'] !== '*' &&
      // An id its schema refuses names nothing: the 400 comes first.
      /^[a-z][a-z0-9-]{2,30}$/.test(request.pathParams['ownerId'] ?? '') &&
      !madeOwners.has(request.pathParams['ownerId']),
  );
  t.same(replaced, [], 'a put without If-None-Match names only an owner the run made');
});

t.test("the suite's steps make what a request names: parents first, a caller-named id drawn", async (t) => {
  const store = ownersStore();
  const client = new ContractClient(await serveStore(t, operations, store), '/v1', operations);
  t.teardown(() => {
    client.close();
  });
  const context = { key: 'k'.repeat(40), bodyLimit: httpLimits.bodyLimitBytes };
  for (const [operationId, success] of [
    ['putAdoption', 200],
    ['deleteAdoption', 204],
    ['listAdoptions', 200],
    ['getOwner', 200],
  ] as const) {
    const operation = operations.find((candidate) => candidate.operationId === operationId)!;
    const request = await existingResourceRequest(operation, client, context, 5, operations);
    const answer = await client.send(request);
    t.equal(answer.status, success, `${operationId} on what was made for it: ${answer.text}`);
  }
  t.ok(store.seen.has('putOwner 201') && store.seen.has('putAdoption 201'), 'owners and adoptions made by PUT');
});
