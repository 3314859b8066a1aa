import fc from 'fast-check';
import t from 'tap';
import { kindAt, kindOfParameter, resourceKinds } from '../../lib/conformance/resources.js';
import { loadContract } from '../../lib/conformance/spec.js';
import { emptyModel, statefulCommands } from '../../lib/conformance/stateful.js';
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
    t.notOk(store.seen.has('putCollar 404'), 'a collar is put only under a pet the sequence made');
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
