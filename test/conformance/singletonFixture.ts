import { createHash } from 'node:crypto';
import { readLocalSpec } from '../../lib/conformance/spec.js';
import type { TestRequest } from '../../lib/conformance/checks.js';
import type { Observed, StatefulTransport } from '../../lib/conformance/stateful.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';

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
export function collarStore(): StatefulTransport & { seen: Set<string>; sent: TestRequest[]; reset(): void } {
  let pets = new Map<string, object>();
  let collars = new Map<string, { petId: number; colour: string }>();
  let keys = new Map<string, { body: string; answer: Observed }>();
  let nextId = 1;
  const seen = new Set<string>();
  const sent: TestRequest[] = [];
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
    // No key, no answer past 401 (what a run sends without one must change nothing).
    if (request.headers['authorization'] === undefined && request.intent !== 'before')
      return answer(401, { code: 'unauthorized' });
    const { petId } = request.pathParams;
    const collar = petId === undefined ? undefined : collars.get(petId);
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
      case 'deletePet': {
        // Its collar goes with it (ON DELETE CASCADE).
        if (!pets.delete(petId!)) return answer(404, { code: 'not_found' });
        collars.delete(petId!);
        return answer(204);
      }
      case 'putCollar': {
        if (Number(petId) >= nextId) seen.add('putCollar under a pet never made');
        if (!pets.has(petId!)) return answer(404, { code: 'not_found' });
        const ifMatch = request.headers['if-match'];
        if (ifMatch !== undefined && (collar === undefined || ifMatch !== tagOf(collar)))
          return answer(412, { code: 'precondition_failed' });
        if (request.headers['if-none-match'] === '*' && collar !== undefined)
          return answer(412, { code: 'precondition_failed' });
        const stored = { petId: Number(petId), ...(JSON.parse(String(request.body)) as { colour: string }) };
        collars.set(petId!, stored);
        const headers = { etag: tagOf(stored) };
        return collar
          ? answer(200, stored, headers)
          : answer(201, stored, { ...headers, location: `/v1/pets/${petId}/collar` });
      }
      case 'getCollar':
        return collar ? read(request, collar) : answer(404, { code: 'not_found' });
      case 'deleteCollar':
        if (!collar) return answer(404, { code: 'not_found' });
        collars.delete(petId!);
        return answer(204);
      default:
        return answer(404, { code: 'not_found' });
    }
  };
  return {
    seen,
    sent,
    reset() {
      nextId = 1;
      pets = new Map();
      collars = new Map();
      keys = new Map();
    },
    send(request) {
      sent.push(request);
      let got: Observed;
      try {
        got = handle(request);
      } catch {
        got = answer(400, { code: 'bad_request' });
      }
      seen.add(`${request.operationId} ${got.status}`);
      if (request.headers['if-match'] !== undefined) seen.add(`${request.operationId} ${got.status} If-Match`);
      return Promise.resolve(got);
    },
  };
}
