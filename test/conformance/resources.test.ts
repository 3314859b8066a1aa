import fc from 'fast-check';
import t from 'tap';
import {
  idempotencyHeader,
  isSafe,
  kindAt,
  labelled,
  referencedKind,
  resourceKinds,
} from '../../lib/conformance/resources.js';
import { ownersOperations, ownersStore, specWithOwners } from './ownersFixture.js';
import { loadContract, readLocalSpec, type Operation, type Schema } from '../../lib/conformance/spec.js';
import { emptyModel, statefulCommands, type Observed, type StatefulTransport } from '../../lib/conformance/stateful.js';
import type { TestRequest } from '../../lib/conformance/checks.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { firstWrites, OwnResources } from '../../scripts/verify/steps.js';

/**
 * Resources made under other resources, read from a spec that has them:
 * openapi.yaml with tags under a pet (`POST /pets/{petId}/tags`, a maker
 * whose Location names `/pets/{petId}/tags/{tagId}`, with an
 * `Idempotency-Key`; `GET` of one tag), a visit recorded under a pet
 * (no id in its answer: not a maker, but with an `Idempotency-Key`) and a
 * list of a pet's notes (`/pets/{petId}/notes`). The stateful model is run against an in-memory
 * store that answers as the spec says.
 */

function specWithTags(): JsonObject {
  const spec = structuredClone(readLocalSpec()) as Record<string, any>;
  const keyHeader = spec['paths']['/pets']['post']['parameters'][0];
  const ok = (schema: object, headers: object = {}) => ({
    description: 'ok',
    headers,
    content: { 'application/json': { schema } },
  });
  const tag = {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'petId', 'label'],
    properties: {
      id: { type: 'integer', minimum: 1, maximum: 1000000 },
      petId: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
      label: { type: 'string', enum: ['calm', 'loud'] },
    },
  };
  const notFound = { $ref: '#/components/responses/NotFound' };
  const reused = { $ref: '#/components/responses/IdempotencyKeyReused' };
  const petId = { $ref: '#/components/parameters/PetId' };
  const tagId = {
    name: 'tagId',
    in: 'path',
    required: true,
    schema: { type: 'integer', minimum: 1, maximum: 1000000 },
  };
  spec['paths']['/pets/{petId}/tags'] = {
    post: {
      operationId: 'createTag',
      parameters: [petId, keyHeader],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              additionalProperties: false,
              required: ['label'],
              properties: { label: tag.properties.label },
            },
          },
        },
      },
      responses: {
        '201': ok(tag, { Location: { required: true, schema: { type: 'string' } } }),
        '404': notFound,
        '422': reused,
      },
    },
  };
  spec['paths']['/pets/{petId}/tags/{tagId}'] = {
    get: { operationId: 'getTag', parameters: [petId, tagId], responses: { '200': ok(tag), '404': notFound } },
  };
  spec['paths']['/pets/{petId}/visits'] = {
    post: {
      operationId: 'recordVisit',
      parameters: [petId, keyHeader],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['room'],
              properties: { room: { type: 'integer', minimum: 1, maximum: 9 } },
            },
          },
        },
      },
      responses: { '201': ok({ type: 'object' }), '404': notFound, '422': reused },
    },
  };
  // What a contributor adds to createPet's 201: links to what can be done under the new pet.
  const links = spec['paths']['/pets']['post']['responses']['201']['links'];
  for (const operationId of ['createTag', 'recordVisit', 'listNotes'])
    links[operationId] = { operationId, parameters: { petId: '$response.body#/id' } };
  spec['paths']['/pets/{petId}/notes'] = {
    get: {
      operationId: 'listNotes',
      parameters: [petId],
      responses: { '200': ok({ type: 'array' }), '404': notFound },
    },
  };
  return spec as JsonObject;
}

const { operations } = loadContract(specWithTags());
const kinds = resourceKinds(operations);

t.test('makers at any depth, exact item paths', async (t) => {
  const pets = kinds.find((kind) => kind.pathParameters.has('petId'))!;
  const tags = kinds.find((kind) => kind.pathParameters.has('tagId'))!;
  t.same([...pets.itemPaths], ['/pets/{petId}'], "a pet's item path is exactly /pets/{petId}");
  t.same([...tags.itemPaths], ['/pets/{petId}/tags/{tagId}'], "a tag's, from its maker's Location");
  t.same(
    tags.makers.map((maker) => [maker.operation.operationId, maker.parents]),
    [['createTag', ['petId']]],
    'createTag makes tags under a pet',
  );
});

/** An in-memory store answering as the spec says: pets, tags under them (by Location), notes lists. */
function memoryStore(): StatefulTransport & { seen: Set<string>; reset(): void } {
  let pets = new Map<string, object>();
  let tags = new Map<string, { id: number; petId: number; label: string }>();
  let keys = new Map<string, { body: string; answer: Observed }>();
  let nextId = 1;
  const seen = new Set<string>();
  const answer = (status: number, json?: unknown, headers: Record<string, string> = {}): Observed => ({
    status,
    headers: new Headers(headers),
    text: json === undefined ? '' : JSON.stringify(json),
    ...(json === undefined ? {} : { json }),
    problems: [],
  });
  const keyed = (request: TestRequest, make: () => Observed): Observed => {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return make();
    const stored = keys.get(key);
    if (stored && stored.body !== request.body) return answer(422, { code: 'idempotency_key_reused' });
    if (stored)
      return {
        ...stored.answer,
        headers: new Headers({ ...Object.fromEntries(stored.answer.headers), 'idempotent-replayed': 'true' }),
      };
    const made = make();
    keys.set(key, { body: String(request.body), answer: made });
    return made;
  };
  // Pets with a visit: a later read or tag of one shows the model still compares and aims at it.
  const visited = new Set<string>();
  const handle = (request: TestRequest): Observed => {
    const petId = request.pathParams['petId'];
    if (petId !== undefined && visited.has(petId) && ['getPet', 'createTag'].includes(request.operationId))
      seen.add(`${request.operationId} after a visit`);
    switch (request.operationId) {
      case 'createPet':
        return keyed(request, () => {
          const pet = { id: nextId++, ...(JSON.parse(String(request.body)) as object) };
          const full = { status: 'available', ...pet };
          pets.set(String(pet.id), full);
          return answer(201, full, { location: `/v1/pets/${pet.id}` });
        });
      case 'getPet': {
        const pet = pets.get(petId!);
        if (pet === undefined) return answer(404, { code: 'not_found' });
        const etag = `"${Buffer.from(JSON.stringify(pet)).toString('base64url')}"`;
        if (request.headers['if-none-match'] === etag) return answer(304, undefined, { etag });
        return answer(200, pet, { etag });
      }
      case 'listPets': {
        const ids = request.query.filter(([name]) => name === 'id').map(([, value]) => value);
        const listed = [...pets.entries()].filter(([id]) => ids.length === 0 || ids.includes(id));
        return answer(
          200,
          listed.map(([, pet]) => pet),
        );
      }
      case 'createTag':
        if (!pets.has(petId!)) return answer(404, { code: 'not_found' });
        return keyed(request, () => {
          const tag = {
            id: nextId++,
            petId: Number(petId),
            ...(JSON.parse(String(request.body)) as { label: string }),
          };
          tags.set(String(tag.id), tag);
          return answer(201, tag, { location: `/v1/pets/${petId}/tags/${tag.id}` });
        });
      case 'getTag': {
        const tag = tags.get(request.pathParams['tagId']!);
        return tag && String(tag.petId) === petId ? answer(200, tag) : answer(404, { code: 'not_found' });
      }
      case 'recordVisit':
        if (!pets.has(petId!)) return answer(404, { code: 'not_found' });
        return keyed(request, () => {
          visited.add(petId!);
          return answer(201, { petId: Number(petId), visit: nextId++ });
        });
      case 'listNotes':
        return pets.has(petId!) ? answer(200, []) : answer(404, { code: 'not_found' });
      default:
        return answer(404, { code: 'not_found' });
    }
  };
  return {
    seen,
    reset() {
      pets = new Map();
      tags = new Map();
      keys = new Map();
      visited.clear();
    },
    send(request) {
      const got = handle(request);
      seen.add(`${request.operationId} ${got.status}`);
      return Promise.resolve(got);
    },
  };
}

t.test('the stateful model makes tags under its own pets, reads them and replays their keys', async (t) => {
  const store = memoryStore();
  // Only what the test spec adds, and the pet's own operations: listPets walks are not modelled by this store.
  const used = operations.filter((operation) =>
    ['createPet', 'getPet', 'createTag', 'getTag', 'recordVisit', 'listNotes'].includes(operation.operationId),
  );
  const commands = statefulCommands({
    operations: used,
    authorization: 'Bearer k',
    basePath: '/v1',
    exclusive: true,
    readOnly: false,
    retired: new Set(),
    keyPrefix: 'tags',
  });
  // Batches until each pair below is seen: which a seed reaches depends on the commands the spec gives.
  for (let batch = 0; batch < 10 && !store.seen.has('createTag 422'); batch += 1) {
    const details = await fc.check(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 30 }), async (sequence) => {
        store.reset();
        await fc.asyncModelRun(() => ({ model: emptyModel(), real: store }), sequence);
      }),
      { numRuns: 200, seed: 5 + batch },
    );
    t.notOk(details.failed, `batch ${batch + 1}: every answer agrees with the model`, {
      error: String(details.errorInstance),
      counterexample: fc.defaultReportMessage(details),
    });
    if (details.failed) break;
  }
  for (const pair of [
    'createTag 201',
    'getTag 200',
    'listNotes 200',
    'listNotes 404',
    'createTag 422',
    'recordVisit 201',
    'recordVisit 422',
    'getPet after a visit',
    'createTag after a visit',
  ])
    t.ok(store.seen.has(pair), `${pair} produced`);
});

t.test("verify's first writes: parents before what is made under them, every operation with a key", async (t) => {
  for (const [name, spec] of [
    ['tags', specWithTags()],
    ['owners', specWithOwners()],
  ] as const) {
    const { operations } = loadContract(spec);
    const own = new OwnResources(resourceKinds(operations));
    const planned = firstWrites(own, operations).map(({ operation }) => operation);
    const makers = own.kinds.flatMap((kind) => kind.makers);
    // What the spec declares: every maker, and every other unsafe operation with a body and a key, once.
    const expected = operations.filter(
      (operation) =>
        makers.some((maker) => maker.operation === operation) ||
        (!isSafe(operation) && operation.body !== undefined && idempotencyHeader(operation) !== undefined),
    );
    t.same(
      planned.map((operation) => operation.operationId).sort(),
      expected.map((operation) => operation.operationId).sort(),
      `${name}: each maker and keyed operation once`,
    );
    // A maker comes after the makers of its parents and of what its id refers to.
    for (const maker of makers) {
      const before = [
        ...maker.parents.map((parent) => kindAt(own.kinds, maker.operation.path, parent)),
        referencedKind(own.kinds, maker),
      ].flatMap((kind) => kind?.makers ?? []);
      for (const earlier of before)
        t.ok(
          planned.indexOf(earlier.operation) < planned.indexOf(maker.operation),
          `${name}: ${earlier.operation.operationId} before ${maker.operation.operationId}`,
        );
    }
  }
});

const owners = loadContract(specWithOwners()).operations;
const ownerKinds = resourceKinds(owners);

t.test('a PUT that declares 201 makes what its path names, the caller choosing the id', async (t) => {
  const kindOf = (path: string) => ownerKinds.find((kind) => kind.itemPaths.has(path));
  const ownersKind = kindOf('/owners/{ownerId}')!;
  const adoptions = kindOf('/owners/{ownerId}/adoptions/{petId}')!;
  t.same(
    ownersKind.makers.map((maker) => [maker.operation.operationId, maker.status, maker.parents, maker.clientId?.name]),
    [['putOwner', 201, [], 'ownerId']],
    'putOwner makes owners: its own ownerId is the id, not a parent',
  );
  t.same(
    adoptions.makers.map((maker) => [maker.operation.operationId, maker.parents, maker.clientId?.name]),
    [['putAdoption', ['ownerId'], 'petId']],
    'putAdoption makes adoptions under an owner, named by a pet',
  );
  t.equal(kindAt(ownerKinds, '/owners/{ownerId}/adoptions/{petId}', 'ownerId'), ownersKind, 'its parent: an owner');
  t.ok(referencedKind(ownerKinds, adoptions.makers[0]!)?.itemPaths.has('/pets/{petId}'), 'its id: a pet');
  t.same([...kindOf('/pets/{petId}')!.itemPaths], ['/pets/{petId}'], 'and pets keep their own item path');
});

t.test(
  'the stateful model creates, replaces and is refused by state (404, 409, 412) as the spec declares',
  async (t) => {
    const store = ownersStore();
    const commands = statefulCommands({
      operations: owners.filter((operation) => ownersOperations.includes(operation.operationId)),
      authorization: 'Bearer k',
      basePath: '/v1',
      exclusive: true,
      readOnly: false,
      retired: new Set(),
      keyPrefix: 'owners',
    });
    const wanted = [
      'putOwner 201',
      'putOwner 200',
      'putOwner 412',
      'putOwner 412 If-Match',
      'putOwner 200 If-Match',
      'getOwner 304',
      'putAdoption 201',
      'putAdoption 200',
      'putAdoption 404',
      'putAdoption 409',
      'listAdoptions 200',
      'listAdoptions 304',
      'deleteAdoption 204',
      'deleteAdoption 404',
    ];
    // Batches until each is seen: which a seed reaches depends on the commands the spec gives.
    for (let batch = 0; batch < 10 && wanted.some((pair) => !store.seen.has(pair)); batch += 1) {
      const details = await fc.check(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (sequence) => {
          store.reset();
          await fc.asyncModelRun(() => ({ model: emptyModel(), real: store }), sequence);
        }),
        { numRuns: 100, seed: 61 + batch },
      );
      t.notOk(details.failed, `batch ${batch + 1}: every answer agrees with the model`, {
        error: String(details.errorInstance),
        counterexample: fc.defaultReportMessage(details),
      });
      if (details.failed) break;
    }
    for (const pair of wanted) t.ok(store.seen.has(pair), `${pair} produced`);
    t.notOk(store.seen.has('putOwner 400'), 'every ownerId sent matches its pattern');
    t.ok(
      store.sent.some((request) => request.operationId === 'putOwner' && request.headers['if-none-match'] === '*'),
      'create-only puts are sent',
    );
  },
);

// A run labels what it writes (npm run verify, the topology's loads) in a free-text string of the body; a string
// whose pattern refuses the label (a code of 15 digits) is left as drawn, or every valid request would be a 400.
t.test('the label goes into a string whose schema holds it, never one its pattern refuses', async (t) => {
  const code = { type: 'string', minLength: 15, maxLength: 15, pattern: '^[0-9]{15}$' };
  const operationWith = (properties: Record<string, Schema>): Operation => ({
    operationId: 'putThing',
    method: 'PUT',
    path: '/things/{thingId}',
    parameters: [],
    body: {
      required: true,
      mediaType: 'application/json',
      kind: 'json',
      schema: { type: 'object', additionalProperties: false, required: Object.keys(properties), properties },
    },
    responses: new Map(),
    secured: true,
    scopes: [],
  });
  const send = (body: object): TestRequest => ({
    operationId: 'putThing',
    intent: 'valid',
    pathParams: {},
    query: [],
    headers: {},
    body: JSON.stringify(body),
  });
  const codeOnly = labelled(operationWith({ code }), send({ code: '123456789012345' }), 'contract-verify run');
  t.same(JSON.parse(String(codeOnly.body)), { code: '123456789012345' }, 'a code is not labelled');
  const both = labelled(
    operationWith({ code, nickname: { type: 'string', maxLength: 40, pattern: '^[^\\x00-\\x1F]+$' } }),
    send({ code: '123456789012345', nickname: 'Rex' }),
    'contract-verify run',
  );
  t.same(
    JSON.parse(String(both.body)),
    { code: '123456789012345', nickname: 'contract-verify run Rex' },
    'the free text that holds the label gets it',
  );
});
