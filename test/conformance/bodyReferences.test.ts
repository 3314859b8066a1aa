import fc from 'fast-check';
import t from 'tap';
import { bodyReferences, resourceKinds } from '../../lib/conformance/resources.js';
import { loadContract, readLocalSpec } from '../../lib/conformance/spec.js';
import { emptyModel, statefulCommands, type Observed, type StatefulTransport } from '../../lib/conformance/stateful.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import type { ContractClient, TestRequest } from './client.js';
import { existingResourceRequest, makeResource } from './steps.js';
import { OwnResources } from '../../scripts/verify/ownResources.js';

// A resource whose body names another by id (POST /visits {petId, date}, 422 when no pet has it): the suite's
// steps make the pet first and send its id, as they make a parent named in the path.
function specWithVisits(): JsonObject {
  const spec = structuredClone(readLocalSpec()) as Record<string, any>;
  const visit = {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'petId', 'date'],
    properties: {
      id: { type: 'string', format: 'uuid', minLength: 36, maxLength: 36 },
      petId: { $ref: '#/components/schemas/PetId' },
      date: { type: 'string', format: 'date', minLength: 10, maxLength: 10 },
    },
  };
  const { id: _id, ...newVisitProperties } = visit.properties;
  const refused = { description: 'refused', content: { 'application/json': { schema: { type: 'object' } } } };
  spec.paths['/visits'] = {
    post: {
      operationId: 'createVisit',
      security: [{ bearerAuth: ['pets:write'] }],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { ...visit, required: ['petId', 'date'], properties: newVisitProperties },
          },
        },
      },
      responses: {
        '201': {
          description: 'made',
          headers: { Location: { required: true, schema: { type: 'string' } } },
          links: { getVisit: { operationId: 'getVisit', parameters: { visitId: '$response.body#/id' } } },
          content: { 'application/json': { schema: visit } },
        },
        '422': refused,
      },
    },
  };
  spec.paths['/visits/{visitId}'] = {
    get: {
      operationId: 'getVisit',
      security: [{ bearerAuth: ['pets:read'] }],
      parameters: [{ name: 'visitId', in: 'path', required: true, schema: visit.properties.id }],
      responses: { '200': { description: 'ok', content: { 'application/json': { schema: visit } } }, '404': refused },
    },
  };
  return spec as JsonObject;
}

t.test("the suite's steps send an id of a kind in a body as one made for it", async (t) => {
  const { operations } = loadContract(specWithVisits());
  const kinds = resourceKinds(operations);
  const createVisit = operations.find((operation) => operation.operationId === 'createVisit')!;
  t.same(
    bodyReferences(kinds, createVisit).map(({ name }) => name),
    ['petId'],
    'petId in the body names a pet',
  );
  const sent: TestRequest[] = [];
  const pets = new Set<number>();
  const answer = (status: number, json: unknown, location: string | null = null) => ({
    status,
    json,
    text: JSON.stringify(json),
    headers: new Headers(location === null ? {} : { location }),
    problems: [],
  });
  const client = {
    send: async (request: TestRequest) => {
      sent.push(request);
      const body = JSON.parse(String(request.body)) as Record<string, unknown>;
      if (request.operationId === 'createPet') {
        const id = pets.size + 7;
        pets.add(id);
        return answer(201, { id, ...body, status: 'available' }, `/v1/pets/${id}`);
      }
      if (!pets.has(body['petId'] as number)) return answer(422, { code: 'unknown_pet', message: '', status: 422 });
      const id = '00000000-0000-4000-8000-000000000001';
      return answer(201, { id, ...body }, `/v1/visits/${id}`);
    },
  } as unknown as ContractClient;
  const id = await makeResource(client, operations, 'visitId', 'k'.repeat(40), 3);
  t.equal(id, '00000000-0000-4000-8000-000000000001', 'the visit was made');
  t.same(
    sent.map((request) => request.operationId),
    ['createPet', 'createVisit'],
    'the pet first',
  );
  t.equal(JSON.parse(String(sent[1]!.body)).petId, 7, "the visit names the pet's id, a number as its schema says");
  const request = await existingResourceRequest(
    createVisit,
    client,
    { key: 'k'.repeat(40), bodyLimit: 65536 },
    3,
    operations,
  );
  t.equal(JSON.parse(String(request.body)).petId, 8, 'a request that is sure to succeed names a pet made for it');
});

t.test('the stateful model books visits of pets it made, reads them, and forgets them with their pet', async (t) => {
  // This memory store keeps no Idempotency-Keys: createPet without one.
  const spec = specWithVisits() as Record<string, any>;
  const createPet = spec.paths['/pets'].post;
  createPet.parameters = createPet.parameters.filter(
    (parameter: { name?: string }) => parameter.name !== 'Idempotency-Key',
  );
  delete createPet.responses['409'];
  delete createPet.responses['422'];
  // Visit ids fall (a UUID has no order): only ids the server numbers must rise.
  // A pet removed takes its visits with it (ON DELETE CASCADE): the model may no longer expect them.
  spec.paths['/pets/{petId}'].delete = {
    operationId: 'deletePet',
    parameters: [{ $ref: '#/components/parameters/PetId' }],
    responses: { '204': { description: 'removed' }, '404': { $ref: '#/components/responses/NotFound' } },
  };
  const { operations } = loadContract(spec as JsonObject);
  const used = operations.filter((operation) =>
    ['createPet', 'getPet', 'deletePet', 'createVisit', 'getVisit'].includes(operation.operationId),
  );
  const seen = new Set<string>();
  let pets = new Map<number, unknown>();
  let lastPet = 0;
  let lastVisit = 0;
  let visits = new Map<string, unknown>();
  const answer = (status: number, json: unknown, location?: string): Observed => ({
    status,
    json,
    text: JSON.stringify(json),
    headers: new Headers({ 'content-type': 'application/json', ...(location ? { location } : {}) }),
    problems: [],
  });
  const handle = (request: TestRequest): Observed => {
    const body = request.body === undefined ? {} : (JSON.parse(String(request.body)) as Record<string, unknown>);
    switch (request.operationId) {
      case 'createPet': {
        const pet = { id: (lastPet += 1), status: 'available', ...body };
        pets.set(pet.id, pet);
        return answer(201, pet, `/v1/pets/${pet.id}`);
      }
      case 'getPet': {
        const pet = pets.get(Number(request.pathParams['petId']));
        return pet ? answer(200, pet) : answer(404, { code: 'not_found' });
      }
      case 'deletePet': {
        const petId = Number(request.pathParams['petId']);
        if (!pets.delete(petId)) return answer(404, { code: 'not_found' });
        for (const [id, visit] of visits) if ((visit as { petId: number }).petId === petId) visits.delete(id);
        return { status: 204, text: '', headers: new Headers(), problems: [] };
      }
      case 'createVisit': {
        if (!pets.has(body['petId'] as number)) return answer(422, { code: 'unknown_pet' });
        const id = `00000000-0000-4000-8000-${String(999999999999 - (lastVisit += 1))}`;
        const visit = { id, ...body };
        visits.set(id, visit);
        return answer(201, visit, `/v1/visits/${id}`);
      }
      case 'getVisit': {
        const visit = visits.get(request.pathParams['visitId']!);
        return visit ? answer(200, visit) : answer(404, { code: 'not_found' });
      }
      default:
        return answer(404, { code: 'not_found' });
    }
  };
  // A read's ETag is its body's text; If-None-Match with it is a 304.
  const tagged = (request: TestRequest): Observed => {
    const got = handle(request);
    if (got.status !== 200) return got;
    const etag = `"${Buffer.from(got.text).toString('base64url')}"`;
    if (request.headers['if-none-match'] === etag)
      return { status: 304, text: '', headers: new Headers({ etag }), problems: [] };
    got.headers.set('etag', etag);
    return got;
  };
  const store: StatefulTransport = {
    send(request) {
      const got = tagged(request);
      seen.add(`${request.operationId} ${got.status}`);
      return Promise.resolve(got);
    },
  };
  const commands = statefulCommands({
    operations: used,
    authorization: 'Bearer k',
    basePath: '/v1',
    exclusive: true,
    readOnly: false,
    retired: new Set(),
    keyPrefix: 'visits',
  });
  const details = await fc.check(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 20 }), async (sequence) => {
      pets = new Map();
      lastPet = 0;
      lastVisit = 0;
      visits = new Map();
      await fc.asyncModelRun(() => ({ model: emptyModel(), real: store }), sequence);
    }),
    { numRuns: 100, seed: 5 },
  );
  t.notOk(details.failed, 'every answer agrees with the model', {
    error: String(details.errorInstance),
    counterexample: fc.defaultReportMessage(details),
  });
  for (const pair of ['createVisit 201', 'getVisit 200', 'deletePet 204']) t.ok(seen.has(pair), `${pair} produced`);
  t.notOk(seen.has('createVisit 422'), 'no visit named a pet the model did not know');
});

t.test("verify's unsafe requests name, in their body too, only what the run made", async (t) => {
  const { operations } = loadContract(specWithVisits());
  const own = new OwnResources(resourceKinds(operations));
  const createVisit = operations.find((operation) => operation.operationId === 'createVisit')!;
  const createPet = operations.find((operation) => operation.operationId === 'createPet')!;
  const request = (body: unknown): TestRequest => ({
    operationId: 'createVisit',
    intent: 'valid',
    pathParams: {},
    query: [],
    headers: {},
    body: JSON.stringify(body),
  });
  t.equal(own.aim(createVisit, request({ petId: 1, date: '2026-01-01' })), undefined, 'no pet of the run: not sent');
  own.add(own.makerOf(createPet)!, { json: { id: 7 }, headers: new Headers() });
  const aimed = own.aim(createVisit, request({ petId: 1, date: '2026-01-01' }));
  t.same(JSON.parse(String(aimed?.body)), { petId: 7, date: '2026-01-01' }, "the run's pet, whatever was drawn");
  t.same(
    JSON.parse(String(own.aim(createVisit, request({ petId: 'abc', date: '2026-01-01' }))?.body)),
    { petId: 'abc', date: '2026-01-01' },
    'a value no reading makes an id is sent as drawn (a 400)',
  );
  t.equal(own.aim(createVisit, request({ petId: 0, date: '2026-01-01' })), undefined, 'a refused number: not sent');
});

t.test("verify's aiming keeps a body's bytes: an oversize body stays oversize, others are sent as drawn", async (t) => {
  const { operations } = loadContract(specWithVisits());
  const own = new OwnResources(resourceKinds(operations));
  const createVisit = operations.find((operation) => operation.operationId === 'createVisit')!;
  const createPet = operations.find((operation) => operation.operationId === 'createPet')!;
  own.add(own.makerOf(createPet)!, { json: { id: 7 }, headers: new Headers() });
  const padding = ' '.repeat(4096);
  const unreferenced = `{"name":"Rex","categoryId":1}${padding}`;
  t.equal(own.aimBody(createPet, unreferenced), unreferenced, 'no id of another kind in it: byte for byte');
  const drawn = `{"petId":123456789,"date":"2026-01-01"}${padding}`;
  const aimed = own.aimBody(createVisit, drawn);
  t.same(JSON.parse(String(aimed)), { petId: 7, date: '2026-01-01' }, "the run's pet");
  t.ok(Buffer.byteLength(String(aimed)) >= Buffer.byteLength(drawn), 'and not a byte shorter than drawn');
});
