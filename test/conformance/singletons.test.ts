import fc from 'fast-check';
import t from 'tap';
import { isSafe, kindAt, kindOfParameter, operationsOn, resourceKinds } from '../../lib/conformance/resources.js';
import { loadContract } from '../../lib/conformance/spec.js';
import { emptyModel, statefulCommands } from '../../lib/conformance/stateful.js';
import { OwnResources } from '../../scripts/verify/ownResources.js';
import { runVerification } from '../../scripts/verify/verify.js';
import { httpLimits } from '../../src/http/limits.js';
import { ContractClient } from './client.js';
import { collarOperations, collarStore, specWithCollars } from './singletonFixture.js';
import { existingResourceRequest } from './steps.js';
import { serveStore } from './storeServer.js';

/**
 * A resource with no id of its own under a pet (./singletonFixture.ts: PUT /pets/{petId}/collar declaring 201):
 * RFC 9110 9.3.4, a PUT creates or replaces the resource at its URI, here named by the pet's id alone.
 */

const operations = loadContract(specWithCollars()).operations.filter((operation) =>
  collarOperations.includes(operation.operationId),
);
const kinds = resourceKinds(operations);

t.test('a PUT declaring 201 to a path ending in a literal makes a resource its parents name', async (t) => {
  const collars = kinds.find((kind) => kind.itemPaths.has('/pets/{petId}/collar'));
  t.ok(collars, 'putCollar makes collars');
  t.same(
    collars?.makers.map((maker) => [maker.operation.operationId, maker.status, maker.parents, maker.singleton]),
    [['putCollar', 201, ['petId'], true]],
    'its only ids are its parents',
  );
  t.same([...(collars?.pathParameters ?? [])], [], 'no parameter of its own');
  t.equal(kindAt(kinds, '/pets/{petId}/collar', 'petId'), kindOfParameter(kinds, 'petId'), 'its parent: a pet');
  t.ok(kindOfParameter(kinds, 'petId')?.itemPaths.has('/pets/{petId}'), 'petId still names a pet');
  t.equal(collars?.makers[0]?.idOf(undefined, null, { petId: '7' }), '7', "keyed by its parent's id");
});

t.test(
  'the stateful model keys a singleton by its parents: 200/204 after a create, 404 before and after a delete',
  async (t) => {
    const store = collarStore();
    const commands = statefulCommands({
      operations,
      authorization: 'Bearer k',
      basePath: '/v1',
      exclusive: true,
      readOnly: false,
      retired: new Set(),
      keyPrefix: 'collars',
    });
    const wanted = [
      'putCollar 201',
      'putCollar 200',
      'putCollar 412',
      'putCollar 412 If-Match',
      'putCollar 200 If-Match',
      'getCollar 200',
      'getCollar 304',
      'getCollar 404',
      'deleteCollar 204',
      'deleteCollar 404',
    ];
    for (let batch = 0; batch < 10 && wanted.some((pair) => !store.seen.has(pair)); batch += 1) {
      const details = await fc.check(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (sequence) => {
          store.reset();
          await fc.asyncModelRun(() => ({ model: emptyModel(), real: store }), sequence);
        }),
        { numRuns: 100, seed: 17 + batch },
      );
      t.notOk(details.failed, `batch ${batch + 1}: every answer agrees with the model`, {
        error: String(details.errorInstance),
        counterexample: fc.defaultReportMessage(details),
      });
      if (details.failed) break;
    }
    for (const pair of wanted) t.ok(store.seen.has(pair), `${pair} produced`);
    t.ok(store.seen.has('putCollar 404'), 'and a collar put under a pet the sequence removed: the declared 404');
    t.notOk(store.seen.has('putCollar under a pet never made'), 'a collar is put only under a pet the sequence made');
  },
);

t.test("the suite's steps find a singleton by its path: made under the parents made for it", async (t) => {
  const store = collarStore();
  const client = new ContractClient(await serveStore(t, operations, store), '/v1', operations);
  t.teardown(() => {
    client.close();
  });
  const context = { key: 'k'.repeat(40), bodyLimit: httpLimits.bodyLimitBytes };
  for (const [operationId, success] of [
    ['getCollar', 200],
    ['putCollar', 200],
    ['deleteCollar', 204],
  ] as const) {
    const operation = operations.find((candidate) => candidate.operationId === operationId)!;
    const request = await existingResourceRequest(operation, client, context, 5, operations);
    const answer = await client.send(request);
    t.equal(answer.status, success, `${operationId} on what was made for it: ${answer.text}`);
  }
  t.ok(store.seen.has('putCollar 201'), 'collars made by PUT under pets made for them');
});

t.test(
  'verify puts a singleton only under parents it made, create-only, and reads and removes what it put',
  async (t) => {
    const store = collarStore();
    const before = [
      { operationId: 'createPet', pathParams: {}, body: '{"name":"theirs","categoryId":1}' },
      { operationId: 'putCollar', pathParams: { petId: '1' }, body: '{"colour":"red"}' },
    ];
    for (const request of before) await store.send({ ...request, intent: 'before', query: [], headers: {} });
    store.sent.length = 0;
    store.seen.clear();
    const findings = await runVerification({
      baseUrl: `${await serveStore(t, operations, store)}/v1`,
      apiKey: 'k'.repeat(40),
      readOnly: false,
      maxRequests: 400,
      seed: 3,
      wait: () => Promise.resolve(),
      spec: specWithCollars(),
    });
    t.same(
      // The store checks neither keys nor parameters, nor lists pets: judged are the collars' writes, reads and model.
      findings.failures.filter(
        (failure) =>
          (failure.subject === 'stateful sequence' && /Collar/.test(failure.message.split('\n')[0]!)) ||
          (/Collar/.test(failure.subject) && /ETag round trip|a resource of the run/.test(failure.message)),
      ),
      [],
      'its writes, the ETag round trip and the stateful sequences agree with the store',
    );
    t.same(
      findings.failures.filter((failure) => failure.check === 'unsafe request to a resource the run did not make'),
      [],
      'no unsafe request was refused as foreign',
    );
    const unsafe = store.sent.filter(
      (request) => !isSafe(operations.find((operation) => operation.operationId === request.operationId)!),
    );
    t.same(
      unsafe.filter((request) => request.pathParams['petId'] === '1'),
      [],
      'no unsafe request named the pet made before the run, nor its collar',
    );
    const first = store.sent.find((request) => request.operationId === 'putCollar');
    t.equal(first?.headers['if-none-match'], '*', 'the first put is create-only');
    for (const pair of ['putCollar 201', 'getCollar 200', 'getCollar 304', 'deleteCollar 204'])
      t.ok(store.seen.has(pair), `${pair} produced`);
    t.ok((findings.createdBy.get('putCollar') ?? 0) > 0, 'counted as made by putCollar');
    t.same(
      findings.notes.filter((note) => /Collar/.test(note) && /not checked/.test(note)),
      [],
      'the ETag round trip read the collar it put (not skipped as one it cannot name)',
    );
  },
);

t.test("the run's own singletons: found by their path, an unsafe request aimed at one the run made", async (t) => {
  const own = new OwnResources(kinds);
  const petMaker = kinds.flatMap((kind) => kind.makers).find((maker) => maker.operation.operationId === 'createPet')!;
  const collarMaker = kinds.flatMap((kind) => kind.makers).find((maker) => maker.singleton)!;
  for (const id of [1, 2, 3]) own.add(petMaker, { json: { id }, headers: new Headers({ location: `/v1/pets/${id}` }) });
  t.equal(own.madeAt('/pets/{petId}/collar'), undefined, 'none made: none found');
  own.add(collarMaker, { json: { petId: 2, colour: 'red' }, headers: new Headers() }, { petId: '2' });
  t.ok(own.isSingletonPath('/pets/{petId}/collar') && !own.isSingletonPath('/pets/{petId}'), "its path, not the pet's");
  for (let turn = 0; turn < 3; turn += 1)
    t.same(own.madeAt('/pets/{petId}/collar'), { petId: '2' }, 'the one the run made, under its pet');
  const deleteCollar = operations.find((operation) => operation.operationId === 'deleteCollar')!;
  const request = { operationId: 'deleteCollar', intent: 'valid', pathParams: { petId: '7' }, query: [], headers: {} };
  for (let turn = 0; turn < 3; turn += 1)
    t.equal(own.aim(deleteCollar, request)?.pathParams['petId'], '2', 'a DELETE is aimed at the collar the run put');
});

t.test("a singleton's operations are its own, not its parent's: the pet's maker need not link to them", async (t) => {
  const pets = kindOfParameter(kinds, 'petId')!;
  const collars = kinds.find((kind) => kind.itemPaths.has('/pets/{petId}/collar'))!;
  t.same(
    operationsOn(kinds, operations, pets)
      .map((operation) => operation.operationId)
      .sort(),
    ['deletePet', 'getPet'],
    "on a pet: its own path's, not the collar's (absent until put: following a link there right away is a 404)",
  );
  t.same(operationsOn(kinds, operations, collars), [], 'nor does a collar name itself by a parameter to link');
});
