import { createHash } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import { bytesWithin, repeatedTo } from '../../lib/conformance/arbitraries.js';
import type { TestRequest } from '../../lib/conformance/checks.js';
import { loadContract, readLocalSpec } from '../../lib/conformance/spec.js';
import { emptyModel, statefulCommands, type Observed } from '../../lib/conformance/stateful.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { MemoryPets, answer, conditionalRead, failedPrecondition, notFound, recordingStore } from './memoryStore.js';

/**
 * The stateful model on two shapes of body under a pet, on a spec of this test's own: a photo in bytes
 * (PUT /pets/{petId}/photo in image/png: 201, then 204, no body; GET answering the bytes with ETag, 304;
 * DELETE), and the pet's care changed by a JSON Merge Patch under If-Match (PATCH /pets/{petId}/care: 200 or
 * 412). The model sends bytes as bytes, remembers what it put, and sends stale and current tags to a write
 * under the pet that declares If-Match and 412.
 */

function specWithPhotoAndCare(): JsonObject {
  const spec = structuredClone(readLocalSpec()) as Record<string, any>;
  const petId = { $ref: '#/components/parameters/PetId' };
  const header = (name: string) => ({ name, in: 'header', required: false, schema: { type: 'string' } });
  const etag = { ETag: { required: true, schema: { type: 'string' } } };
  const refused = { description: 'refused', content: { 'application/json': { schema: { type: 'object' } } } };
  const png = { 'image/png': { schema: { type: 'string', contentMediaType: 'image/png' } } };
  const text = { type: 'string', enum: ['fish', 'hay', 'oats'] };
  const care = { type: 'object', additionalProperties: false, properties: { diet: text, vet: text } };
  const careOk = { description: 'ok', headers: etag, content: { 'application/json': { schema: care } } };
  spec['paths']['/pets/{petId}'].delete = {
    operationId: 'deletePet',
    parameters: [petId],
    responses: { '204': { description: 'removed' }, '404': refused },
  };
  spec['paths']['/pets/{petId}/photo'] = {
    put: {
      operationId: 'putPhoto',
      parameters: [petId],
      requestBody: { required: true, 'x-body-limit-bytes': 64, content: png },
      responses: {
        '201': { description: 'stored', headers: { Location: { required: true, schema: { type: 'string' } } } },
        '204': { description: 'replaced' },
        '404': refused,
      },
    },
    get: {
      operationId: 'getPhoto',
      parameters: [petId, header('If-None-Match')],
      responses: {
        '200': { description: 'the photo', headers: etag, content: png },
        '304': { description: 'not modified' },
        '404': refused,
      },
    },
    delete: {
      operationId: 'deletePhoto',
      parameters: [petId],
      responses: { '204': { description: 'removed' }, '404': refused },
    },
  };
  spec['paths']['/pets/{petId}/care'] = {
    get: {
      operationId: 'getCare',
      parameters: [petId, header('If-None-Match')],
      responses: { '200': careOk, '304': { description: 'not modified' }, '404': refused },
    },
    patch: {
      operationId: 'updateCare',
      parameters: [petId, header('If-Match')],
      requestBody: {
        required: true,
        content: { 'application/merge-patch+json': { schema: { ...care, minProperties: 1 } } },
      },
      responses: { '200': careOk, '404': refused, '412': refused },
    },
  };
  return spec as JsonObject;
}

const kept = ['createPet', 'deletePet', 'putPhoto', 'getPhoto', 'deletePhoto', 'getCare', 'updateCare'];
const operations = loadContract(specWithPhotoAndCare()).operations.filter((operation) =>
  kept.includes(operation.operationId),
);

const bytesAnswer = (bytes: Uint8Array, tag: string): Observed => ({
  status: 200,
  headers: new Headers({ 'content-type': 'image/png', etag: tag }),
  text: Buffer.from(bytes).toString('latin1'),
  bytes,
  problems: [],
});

/**
 * An in-memory store answering the spec; `keepsFirstPhoto` answers a replace 204 but keeps the first photo,
 * `ignoresIfMatch` changes the care whatever If-Match says: what the model must catch.
 */
function photoAndCareStore(broken: { keepsFirstPhoto?: boolean; ignoresIfMatch?: boolean } = {}) {
  let pets = new MemoryPets();
  let photos = new Map<string, Uint8Array>();
  let cares = new Map<string, Record<string, string>>();
  const handle = (request: TestRequest): Observed => {
    const petId = request.pathParams['petId'];
    const photo = petId === undefined ? undefined : photos.get(petId);
    switch (request.operationId) {
      case 'putPhoto': {
        if (!(request.body instanceof Uint8Array)) return answer(415, { code: 'unsupported_media_type' });
        if (!pets.has(petId!)) return notFound();
        if (!photo || !broken.keepsFirstPhoto) photos.set(petId!, Uint8Array.from(request.body));
        return photo ? answer(204) : answer(201, undefined, { location: `/v1/pets/${petId}/photo` });
      }
      case 'getPhoto': {
        if (!photo) return notFound();
        const tag = `"${createHash('sha1').update(photo).digest('base64url')}"`;
        return request.headers['if-none-match'] === tag
          ? answer(304, undefined, { etag: tag })
          : bytesAnswer(photo, tag);
      }
      case 'deletePhoto':
        return photos.delete(petId!) ? answer(204) : notFound();
      case 'getCare':
        return pets.has(petId!) ? conditionalRead(request, cares.get(petId!) ?? {}) : notFound();
      case 'updateCare': {
        if (!pets.has(petId!)) return notFound();
        const current = cares.get(petId!) ?? {};
        const refused = broken.ignoresIfMatch ? undefined : failedPrecondition(request, current);
        if (refused) return refused;
        const changed = { ...current, ...(JSON.parse(String(request.body)) as Record<string, string>) };
        cares.set(petId!, changed);
        return answer(200, changed);
      }
      default:
        return (
          pets.handle(request, (removed) => {
            photos.delete(removed);
            cares.delete(removed);
          }) ?? notFound()
        );
    }
  };
  return recordingStore(handle, () => {
    pets = new MemoryPets();
    photos = new Map();
    cares = new Map();
  });
}

async function runModel(store: ReturnType<typeof photoAndCareStore>, runs: number, seed: number) {
  const commands = statefulCommands({
    operations,
    authorization: 'Bearer k',
    basePath: '/v1',
    exclusive: true,
    readOnly: false,
    retired: new Set(),
    keyPrefix: 'photos',
  });
  return fc.check(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (sequence) => {
      store.reset();
      await fc.asyncModelRun(() => ({ model: emptyModel(), real: store }), sequence);
    }),
    { numRuns: runs, seed },
  );
}

t.test('bytes are put as bytes and read back as the model remembers them; a care patch meets If-Match', async (t) => {
  const store = photoAndCareStore();
  const details = await runModel(store, 300, 11);
  t.notOk(details.failed, 'every answer agrees with the model', {
    error: String(details.errorInstance),
    counterexample: fc.defaultReportMessage(details),
  });
  const puts = store.sent.filter((request) => request.operationId === 'putPhoto');
  t.ok(puts.length > 0, 'photos were put');
  t.ok(
    puts.every((request) => request.body instanceof Uint8Array && request.headers['content-type'] === 'image/png'),
    'every photo sent as bytes, in image/png',
  );
  t.ok(
    puts.every((request) => (request.body as Uint8Array).length <= 64),
    'within its x-body-limit-bytes',
  );
  for (const pair of [
    'putPhoto 201',
    'putPhoto 204',
    'getPhoto 200',
    'getPhoto 304',
    'getPhoto 404',
    'deletePhoto 204',
    'deletePhoto 404',
    'updateCare 200',
    'updateCare 412 If-Match',
    'updateCare 200 If-Match',
    'getCare 200',
  ])
    t.ok(store.seen.has(pair), `${pair} produced`);
});

t.test('a store that answers a replace but keeps the first photo disagrees with the model', async (t) => {
  const details = await runModel(photoAndCareStore({ keepsFirstPhoto: true }), 300, 11);
  t.ok(details.failed, 'a mismatch found');
  t.match(String(details.errorInstance), /getPhoto .*bytes the model says were put/);
});

t.test('a store that changes the care whatever If-Match says disagrees with the model', async (t) => {
  const details = await runModel(photoAndCareStore({ ignoresIfMatch: true }), 300, 11);
  t.ok(details.failed, 'a mismatch found');
  t.match(String(details.errorInstance), /updateCare .*a stale tag: expected 412, got 200/);
});

t.test('a body at the limit is its drawn pattern repeated to the limit, byte for byte', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 20 }), fc.nat({ max: 300 }), (pattern, length) => {
      const bytes = repeatedTo(pattern, length);
      const expected = Array.from({ length }, (_, at) => (pattern.length === 0 ? 0 : pattern[at % pattern.length]!));
      return bytes.length === length && bytes.every((byte, at) => byte === expected[at]);
    }),
  );
  const atLimit = fc.sample(bytesWithin(1 << 20), { numRuns: 200, seed: 7 }).filter((body) => body.length === 1 << 20);
  t.ok(atLimit.length > 0, 'bytesWithin draws bodies of exactly the limit');
  t.end();
});
