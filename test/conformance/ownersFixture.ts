import { readLocalSpec } from '../../lib/conformance/spec.js';
import type { TestRequest } from '../../lib/conformance/checks.js';
import type { Observed } from '../../lib/conformance/stateful.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import {
  MemoryPets,
  answer,
  conditionalRead,
  failedPrecondition,
  notFound,
  recordingStore,
  tagOf,
  type RecordingStore,
} from './memoryStore.js';

/**
 * openapi.yaml with a resource the caller names, as many APIs have it: owners made by
 * `PUT /owners/{ownerId}` (201 create, 200 replace, `If-None-Match: *` create-only and `If-Match` safe
 * replace, 412), their adoptions of pets at `PUT /owners/{ownerId}/adoptions/{petId}` (404 for a missing owner
 * or pet, 409 when another owner has the pet), the list of an owner's adoptions (ETag, 304) and the
 * DELETE of one. putOwner's 201 links to putOwner itself. And an in-memory store that answers as it says.
 */
export function specWithOwners(): JsonObject {
  const spec = structuredClone(readLocalSpec()) as Record<string, any>;
  const ok = (schema: object | undefined, headers: object = {}, links?: object) => ({
    description: 'ok',
    headers,
    ...(schema ? { content: { 'application/json': { schema } } } : {}),
    ...(links ? { links } : {}),
  });
  const etag = { ETag: { required: true, schema: { type: 'string' } } };
  const refused = { description: 'refused', content: { 'application/json': { schema: { type: 'object' } } } };
  const ownerId = {
    name: 'ownerId',
    in: 'path',
    required: true,
    schema: { type: 'string', pattern: '^[a-z][a-z0-9-]{2,30}$', maxLength: 31 },
  };
  const petId = { $ref: '#/components/parameters/PetId' };
  const header = (name: string) => ({ name, in: 'header', required: false, schema: { type: 'string' } });
  const owner = {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'name'],
    properties: { id: ownerId.schema, name: { type: 'string', minLength: 1, maxLength: 40 } },
  };
  const adoption = {
    type: 'object',
    additionalProperties: false,
    required: ['ownerId', 'petId'],
    properties: { ownerId: ownerId.schema, petId: { type: 'integer', minimum: 1, maximum: 9007199254740991 } },
  };
  const body = (schema: object) => ({ required: true, content: { 'application/json': { schema } } });
  spec['paths']['/owners/{ownerId}'] = {
    put: {
      operationId: 'putOwner',
      parameters: [ownerId, header('If-Match'), header('If-None-Match')],
      requestBody: body({
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: { name: owner.properties.name },
      }),
      responses: {
        '200': ok(owner, etag),
        '201': ok(
          owner,
          { ...etag, Location: { required: true, schema: { type: 'string' } } },
          {
            getOwner: { operationId: 'getOwner', parameters: { ownerId: '$response.body#/id' } },
            putOwner: { operationId: 'putOwner', parameters: { ownerId: '$response.body#/id' } },
          },
        ),
        '412': refused,
      },
    },
    get: {
      operationId: 'getOwner',
      parameters: [ownerId, header('If-None-Match')],
      responses: { '200': ok(owner, etag), '304': { description: 'not modified' }, '404': refused },
    },
  };
  spec['paths']['/owners/{ownerId}/adoptions'] = {
    get: {
      operationId: 'listAdoptions',
      parameters: [ownerId, header('If-None-Match')],
      responses: {
        '200': ok({ type: 'array', items: adoption }, etag),
        '304': { description: 'not modified' },
        '404': refused,
      },
    },
  };
  spec['paths']['/owners/{ownerId}/adoptions/{petId}'] = {
    put: {
      operationId: 'putAdoption',
      // No body: a PUT makes what its path names with none as well.
      parameters: [ownerId, petId],
      responses: { '200': ok(adoption), '201': ok(adoption), '404': refused, '409': refused },
    },
    delete: {
      operationId: 'deleteAdoption',
      parameters: [ownerId, petId],
      responses: { '204': { description: 'removed' }, '404': refused },
    },
  };
  return spec as JsonObject;
}

/** The operations of specWithOwners a memory store answers: the pet's maker and read, and the owners'. */
export const ownersOperations = [
  'createPet',
  'getPet',
  'putOwner',
  'getOwner',
  'putAdoption',
  'listAdoptions',
  'deleteAdoption',
];

/** An in-memory store answering specWithOwners as it says; `seen` holds each (operationId, status) answered. */
export function ownersStore(): RecordingStore {
  let pets = new MemoryPets();
  let owners = new Map<string, { id: string; name: string }>();
  let adoptions = new Map<string, string>(); // petId -> ownerId
  const pattern = /^[a-z][a-z0-9-]{2,30}$/;
  const handle = (request: TestRequest): Observed => {
    const { ownerId, petId } = request.pathParams;
    if (ownerId !== undefined && !pattern.test(ownerId)) return answer(400, { code: 'bad_request' });
    const owner = ownerId === undefined ? undefined : owners.get(ownerId);
    switch (request.operationId) {
      case 'putOwner': {
        const refused = failedPrecondition(request, owner);
        if (refused) return refused;
        const stored = { id: ownerId!, ...(JSON.parse(String(request.body)) as { name: string }) };
        owners.set(ownerId!, stored);
        const headers = { etag: tagOf(stored) };
        return owner
          ? answer(200, stored, headers)
          : answer(201, stored, { ...headers, location: `/v1/owners/${ownerId}` });
      }
      case 'getOwner':
        return owner ? conditionalRead(request, owner) : notFound();
      case 'listAdoptions':
        if (!owner) return notFound();
        return conditionalRead(
          request,
          [...adoptions]
            .filter(([, by]) => by === ownerId)
            .map(([pet]) => ({ ownerId, petId: Number(pet) }))
            .sort((a, b) => a.petId - b.petId),
        );
      case 'putAdoption': {
        if (!owner || !pets.has(petId!)) return notFound();
        const by = adoptions.get(petId!);
        if (by !== undefined && by !== ownerId) return answer(409, { code: 'conflict' });
        adoptions.set(petId!, ownerId!);
        return answer(by === undefined ? 201 : 200, { ownerId, petId: Number(petId) });
      }
      case 'deleteAdoption':
        if (adoptions.get(petId!) !== ownerId) return notFound();
        adoptions.delete(petId!);
        return answer(204);
      default:
        return pets.handle(request) ?? notFound();
    }
  };
  return recordingStore(handle, () => {
    pets = new MemoryPets();
    owners = new Map();
    adoptions = new Map();
  });
}
