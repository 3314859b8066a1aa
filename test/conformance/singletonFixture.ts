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
 * openapi.yaml with a resource that has no id of its own, one per pet: its collar at
 * `/pets/{petId}/collar`, made or replaced by PUT (201 or 200, `If-None-Match: *` create-only and `If-Match`
 * safe replace, 412; 404 when the pet is missing), read by GET (ETag, 304, 404) and removed by DELETE (204,
 * 404), and pets removed by DELETE with their collar. createPet's 201 keeps its links to the pet's own operations. And an in-memory store answering as it says.
 */
export function specWithCollars(): JsonObject {
  const spec = structuredClone(readLocalSpec()) as Record<string, any>;
  const ok = (schema: object, headers: object = {}) => ({
    description: 'ok',
    headers,
    content: { 'application/json': { schema } },
  });
  const etag = { ETag: { required: true, schema: { type: 'string' } } };
  const refused = { description: 'refused', content: { 'application/json': { schema: { type: 'object' } } } };
  const petId = { $ref: '#/components/parameters/PetId' };
  const header = (name: string) => ({ name, in: 'header', required: false, schema: { type: 'string' } });
  const colour = { type: 'string', enum: ['red', 'blue', 'green'] };
  const collar = {
    type: 'object',
    additionalProperties: false,
    required: ['petId', 'colour'],
    properties: { petId: { type: 'integer', minimum: 1, maximum: 9007199254740991 }, colour },
  };
  spec['paths']['/pets/{petId}'].delete = {
    operationId: 'deletePet',
    parameters: [petId],
    responses: { '204': { description: 'removed' }, '404': refused },
  };
  spec['paths']['/pets/{petId}/collar'] = {
    put: {
      operationId: 'putCollar',
      parameters: [petId, header('If-Match'), header('If-None-Match')],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object', additionalProperties: false, required: ['colour'], properties: { colour } },
          },
        },
      },
      responses: {
        '200': ok(collar, etag),
        '201': ok(collar, { ...etag, Location: { required: true, schema: { type: 'string' } } }),
        '404': refused,
        '412': refused,
      },
    },
    get: {
      operationId: 'getCollar',
      parameters: [petId, header('If-None-Match')],
      responses: { '200': ok(collar, etag), '304': { description: 'not modified' }, '404': refused },
    },
    delete: {
      operationId: 'deleteCollar',
      parameters: [petId],
      responses: { '204': { description: 'removed' }, '404': refused },
    },
  };
  return onlyOperations(spec, collarOperations) as JsonObject;
}

/** The operations of specWithCollars a memory store answers. */
export const collarOperations = ['createPet', 'getPet', 'deletePet', 'putCollar', 'getCollar', 'deleteCollar'];

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * The spec with only the operations named (and links to them): whatever else openapi.yaml holds by then (a
 * worked example's owners, a PATCH on the pet) is not served by the memory store, so no tool is sent there.
 */
function onlyOperations(spec: Record<string, any>, keep: string[]): Record<string, any> {
  for (const [path, item] of Object.entries<Record<string, any>>(spec['paths'])) {
    for (const method of methods) {
      const operation = item[method];
      if (operation === undefined) continue;
      if (!keep.includes(operation.operationId)) {
        delete item[method];
        continue;
      }
      for (const response of Object.values<Record<string, any>>(operation.responses ?? {}))
        for (const [name, link] of Object.entries<Record<string, any>>(response['links'] ?? {}))
          if (!keep.includes(link['operationId'])) delete response['links'][name];
    }
    if (!methods.some((method) => item[method] !== undefined)) delete spec['paths'][path];
  }
  return spec;
}

/** An in-memory store answering specWithCollars as it says; `seen` holds each (operationId, status) answered. */
export function collarStore(): RecordingStore {
  let pets = new MemoryPets();
  let collars = new Map<string, { petId: number; colour: string }>();
  const handle = (request: TestRequest): Observed => {
    // No key, no answer past 401 (what a run sends without one must change nothing).
    if (request.headers['authorization'] === undefined && request.intent !== 'before')
      return answer(401, { code: 'unauthorized' });
    const { petId } = request.pathParams;
    const collar = petId === undefined ? undefined : collars.get(petId);
    switch (request.operationId) {
      case 'putCollar': {
        if (pets.neverMade(petId!)) store.seen.add('putCollar under a pet never made');
        if (!pets.has(petId!)) return notFound();
        const refused = failedPrecondition(request, collar);
        if (refused) return refused;
        const stored = { petId: Number(petId), ...(JSON.parse(String(request.body)) as { colour: string }) };
        collars.set(petId!, stored);
        const headers = { etag: tagOf(stored) };
        return collar
          ? answer(200, stored, headers)
          : answer(201, stored, { ...headers, location: `/v1/pets/${petId}/collar` });
      }
      case 'getCollar':
        return collar ? conditionalRead(request, collar) : notFound();
      case 'deleteCollar':
        if (!collar) return notFound();
        collars.delete(petId!);
        return answer(204);
      default:
        // A pet's collar goes with it (ON DELETE CASCADE).
        return pets.handle(request, (removed) => collars.delete(removed)) ?? notFound();
    }
  };
  const store = recordingStore(handle, () => {
    pets = new MemoryPets();
    collars = new Map();
  });
  return store;
}
