import fc from 'fast-check';
import t from 'tap';
import { resourceKinds } from '../../lib/conformance/resources.js';
import { loadContract, readLocalSpec } from '../../lib/conformance/spec.js';
import { emptyModel, statefulCommands, type Observed } from '../../lib/conformance/stateful.js';
import type { TestRequest } from '../../lib/conformance/checks.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { answer, conditionalRead, notFound, recordingStore } from './memoryStore.js';

/**
 * Two shapes beside the makers: an action on an item (POST /pets/{petId}/sale: 200 with the pet changed, 409
 * once it is sold, 404 for no pet), which makes nothing; and an asynchronous job (POST /exports: 202 with
 * Location naming its status monitor GET /exports/{exportId}, pending, then done on its own).
 */
function specWithSalesAndExports(): JsonObject {
  const spec = structuredClone(readLocalSpec()) as Record<string, any>;
  const ok = (schema: object, headers: object = {}) => ({
    description: 'ok',
    headers,
    content: { 'application/json': { schema } },
  });
  const refused = { description: 'refused', content: { 'application/json': { schema: { type: 'object' } } } };
  const exportSchema = {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'state'],
    properties: {
      id: { type: 'string', format: 'uuid', maxLength: 36 },
      state: { type: 'string', enum: ['pending', 'done'] },
      petCount: { type: 'integer', minimum: 0, maximum: 1000 },
    },
  };
  spec['paths']['/pets/{petId}/sale'] = {
    post: {
      operationId: 'sellPet',
      parameters: [{ $ref: '#/components/parameters/PetId' }],
      responses: { '200': ok({ $ref: '#/components/schemas/Pet' }), '404': refused, '409': refused },
    },
  };
  spec['paths']['/exports'] = {
    post: {
      operationId: 'createExport',
      responses: { '202': ok(exportSchema, { Location: { required: true, schema: { type: 'string' } } }) },
    },
  };
  spec['paths']['/exports/{exportId}'] = {
    get: {
      operationId: 'getExport',
      parameters: [{ name: 'exportId', in: 'path', required: true, schema: exportSchema.properties.id }],
      responses: { '200': ok(exportSchema), '404': refused },
    },
  };
  // A job whose monitor is not under the collection it was started from: only its link says where it is.
  spec['paths']['/pets/reports'] = {
    post: {
      operationId: 'createReport',
      responses: {
        '202': {
          ...ok(exportSchema, { Location: { required: true, schema: { type: 'string' } } }),
          links: { getReport: { operationId: 'getReport', parameters: { reportId: '$response.body#/id' } } },
        },
      },
    },
  };
  spec['paths']['/reports/{reportId}'] = {
    get: {
      operationId: 'getReport',
      parameters: [{ name: 'reportId', in: 'path', required: true, schema: exportSchema.properties.id }],
      responses: { '200': ok(exportSchema), '404': refused },
    },
  };
  return spec as JsonObject;
}

const { operations } = loadContract(specWithSalesAndExports());
const used = operations.filter((operation) =>
  ['createPet', 'getPet', 'sellPet', 'createExport', 'getExport', 'createReport', 'getReport'].includes(
    operation.operationId,
  ),
);

t.test('an action on an item makes nothing; a 202 with Location makes the status monitor it names', async (t) => {
  const kinds = resourceKinds(used);
  const makers = kinds.flatMap((kind) => kind.makers);
  t.notOk(
    makers.some((maker) => maker.operation.operationId === 'sellPet'),
    'POST /pets/{petId}/sale answering 200 is no maker',
  );
  const exports = kinds.find((kind) => kind.itemPaths.has('/exports/{exportId}'));
  t.same(
    exports?.makers.map((maker) => [maker.operation.operationId, maker.status, maker.accepted]),
    [['createExport', 202, true]],
    'the 202 makes the monitor, accepted: its state is the server to move',
  );
  const reports = kinds.find((kind) => kind.makers.some((maker) => maker.operation.operationId === 'createReport'));
  t.same(
    [...(reports?.itemPaths ?? [])],
    ['/reports/{reportId}'],
    "a monitor elsewhere: its item path from the 202's link",
  );
});

/** Pets that can be sold once, and exports that are pending when made and done at their first read. */
function salesStore() {
  let pets = new Map<string, { id: number; status: string }>();
  let exports = new Map<string, { id: string; state: string; petCount?: number }>();
  let keys = new Map<string, { body: string; answer: Observed }>();
  let nextId = 1;
  const handle = (request: TestRequest): Observed => {
    const { petId, exportId } = request.pathParams;
    switch (request.operationId) {
      case 'createPet': {
        const key = request.headers['idempotency-key'];
        const stored = key === undefined ? undefined : keys.get(key);
        if (stored && stored.body !== request.body) return answer(422, { code: 'idempotency_key_reused' });
        if (stored) return { ...stored.answer, headers: new Headers({ 'idempotent-replayed': 'true' }) };
        const pet = { id: nextId++, status: 'available', ...(JSON.parse(String(request.body)) as object) };
        pets.set(String(pet.id), pet);
        const made = answer(201, { ...pet }, { location: `/v1/pets/${pet.id}` });
        if (key !== undefined) keys.set(key, { body: String(request.body), answer: made });
        return made;
      }
      case 'getPet': {
        const pet = pets.get(petId!);
        return pet ? conditionalRead(request, pet) : notFound();
      }
      case 'sellPet': {
        const pet = pets.get(petId!);
        if (!pet) return notFound();
        if (pet.status === 'sold') return answer(409, { code: 'pet_sold' });
        pet.status = 'sold';
        return answer(200, { ...pet });
      }
      case 'createExport': {
        const id = crypto.randomUUID();
        exports.set(id, { id, state: 'pending' });
        return answer(202, { id, state: 'pending' }, { location: `/v1/exports/${id}` });
      }
      case 'createReport': {
        const id = crypto.randomUUID();
        exports.set(id, { id, state: 'pending' });
        return answer(202, { id, state: 'pending' }, { location: `/v1/reports/${id}` });
      }
      case 'getReport':
      case 'getExport': {
        const job = exports.get(exportId ?? request.pathParams['reportId']!);
        if (!job) return notFound();
        Object.assign(job, { state: 'done', petCount: pets.size });
        return answer(200, { ...job });
      }
      default:
        return notFound();
    }
  };
  return recordingStore(handle, () => {
    pets = new Map();
    exports = new Map();
    keys = new Map();
  });
}

t.test('the stateful model: a sale changes the pet (409 once sold), a monitor moves on by itself', async (t) => {
  const store = salesStore();
  const commands = statefulCommands({
    operations: used,
    authorization: 'Bearer k',
    basePath: '/v1',
    exclusive: true,
    readOnly: false,
    retired: new Set(),
    keyPrefix: 'sales',
  });
  const details = await fc.check(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 30 }), async (sequence) => {
      store.reset();
      await fc.asyncModelRun(() => ({ model: emptyModel(), real: store }), sequence);
    }),
    { numRuns: 200, seed: 7 },
  );
  t.notOk(details.failed, 'every answer agrees with the model', {
    error: String(details.errorInstance),
    counterexample: fc.defaultReportMessage(details),
  });
  for (const pair of [
    'sellPet 200',
    'sellPet 409',
    'getPet 200',
    'createExport 202',
    'getExport 200',
    'createReport 202',
    'getReport 200',
  ])
    t.ok(store.seen.has(pair), `${pair} produced`);
});
