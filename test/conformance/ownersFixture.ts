import { createHash } from 'node:crypto';
import { readLocalSpec } from '../../lib/conformance/spec.js';
import type { TestRequest } from '../../lib/conformance/checks.js';
import type { Observed, StatefulTransport } from '../../lib/conformance/stateful.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';

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
export function ownersStore(): StatefulTransport & { seen: Set<string>; sent: TestRequest[]; reset(): void } {
  let pets = new Map<string, object>();
  let owners = new Map<string, { id: string; name: string }>();
  let adoptions = new Map<string, string>(); // petId -> ownerId
  let keys = new Map<string, { body: string; answer: Observed }>();
  let nextId = 1;
  const seen = new Set<string>();
  const sent: TestRequest[] = [];
  const pattern = /^[a-z][a-z0-9-]{2,30}$/;
  const tagOf = (value: unknown) => `"${createHash('sha1').update(JSON.stringify(value)).digest('base64url')}"`;
  const answer = (status: number, json?: unknown, headers: Record<string, string> = {}): Observed => ({
    status,
    headers: new Headers(headers),
    text: json === undefined ? '' : JSON.stringify(json),
    ...(json === undefined ? {} : { json }),
    problems: [],
  });
  const read = (request: TestRequest, value: unknown) => {
    const tag = tagOf(value);
    return request.headers['if-none-match'] === tag
      ? answer(304, undefined, { etag: tag })
      : answer(200, value, { etag: tag });
  };
  const handle = (request: TestRequest): Observed => {
    const { ownerId, petId } = request.pathParams;
    if (ownerId !== undefined && !pattern.test(ownerId)) return answer(400, { code: 'bad_request' });
    const owner = ownerId === undefined ? undefined : owners.get(ownerId);
    switch (request.operationId) {
      case 'createPet': {
        const key = request.headers['idempotency-key'];
        const stored = key === undefined ? undefined : keys.get(key);
        if (stored && stored.body !== request.body) return answer(422, { code: 'idempotency_key_reused' });
        if (stored) return { ...stored.answer, headers: new Headers({ 'idempotent-replayed': 'true' }) };
        const pet = { id: nextId++, status: 'available', ...(JSON.parse(String(request.body)) as object) };
        pets.set(String(pet.id), pet);
        const made = answer(201, pet, { location: `/v1/pets/${pet.id}` });
        if (key !== undefined) keys.set(key, { body: String(request.body), answer: made });
        return made;
      }
      case 'getPet': {
        const pet = pets.get(petId!);
        return pet ? read(request, pet) : answer(404, { code: 'not_found' });
      }
      case 'putOwner': {
        const ifMatch = request.headers['if-match'];
        if (ifMatch !== undefined && (owner === undefined || ifMatch !== tagOf(owner)))
          return answer(412, { code: 'precondition_failed' });
        if (request.headers['if-none-match'] === '*' && owner !== undefined)
          return answer(412, { code: 'precondition_failed' });
        const stored = { id: ownerId!, ...(JSON.parse(String(request.body)) as { name: string }) };
        owners.set(ownerId!, stored);
        const headers = { etag: tagOf(stored) };
        return owner
          ? answer(200, stored, headers)
          : answer(201, stored, { ...headers, location: `/v1/owners/${ownerId}` });
      }
      case 'getOwner':
        return owner ? read(request, owner) : answer(404, { code: 'not_found' });
      case 'listAdoptions':
        if (!owner) return answer(404, { code: 'not_found' });
        return read(
          request,
          [...adoptions]
            .filter(([, by]) => by === ownerId)
            .map(([pet]) => ({ ownerId, petId: Number(pet) }))
            .sort((a, b) => a.petId - b.petId),
        );
      case 'putAdoption': {
        if (!owner || !pets.has(petId!)) return answer(404, { code: 'not_found' });
        const by = adoptions.get(petId!);
        if (by !== undefined && by !== ownerId) return answer(409, { code: 'conflict' });
        adoptions.set(petId!, ownerId!);
        return answer(by === undefined ? 201 : 200, { ownerId, petId: Number(petId) });
      }
      case 'deleteAdoption':
        if (adoptions.get(petId!) !== ownerId) return answer(404, { code: 'not_found' });
        adoptions.delete(petId!);
        return answer(204);
      default:
        return answer(404, { code: 'not_found' });
    }
  };
  return {
    seen,
    sent,
    reset() {
      pets = new Map();
      owners = new Map();
      adoptions = new Map();
      keys = new Map();
    },
    send(request) {
      sent.push(request);
      let got: Observed;
      try {
        got = handle(request);
      } catch {
        // A body that is not JSON (an invalid request the tools send on purpose).
        got = answer(400, { code: 'bad_request' });
      }
      seen.add(`${request.operationId} ${got.status}`);
      if (request.headers['if-match'] !== undefined) seen.add(`${request.operationId} ${got.status} If-Match`);
      return Promise.resolve(got);
    },
  };
}
