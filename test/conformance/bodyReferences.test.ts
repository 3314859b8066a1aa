import t from 'tap';
import { bodyReferences, resourceKinds } from '../../lib/conformance/resources.js';
import { loadContract, readLocalSpec } from '../../lib/conformance/spec.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import type { ContractClient, TestRequest } from './client.js';
import { existingResourceRequest, makeResource } from './steps.js';

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
