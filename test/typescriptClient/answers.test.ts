import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { generateClient, scriptedFetch, type ScriptedAnswer } from '../helpers/typescriptClient.js';

// The client of a spec of its own (a photo, an export job, a merge-patch update, a note): each 2xx told apart
// with its declared headers by withResponse(), Accept from the declared answers, bodies sent and read by
// their media type (JSON and +json, bytes, text).

const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
const errors = { '400': { description: 'Refused.', content: problem } };
const petId = { name: 'petId', in: 'path', required: true, schema: { type: 'integer' } };
const image = { schema: { type: 'string', contentMediaType: 'image/png' } };
const jpeg = { schema: { type: 'string', contentMediaType: 'image/jpeg' } };

const spec = {
  openapi: '3.1.0',
  info: { title: 'photo studio', version: '0.1.0' },
  servers: [{ url: 'https://studio.test/v1' }],
  paths: {
    '/pets': {
      get: {
        operationId: 'listPets',
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 50 } },
          { name: 'status', in: 'query', schema: { $ref: '#/components/schemas/PetStatus' } },
        ],
        responses: {
          '200': {
            description: 'A page.',
            headers: { Link: { schema: { type: 'string' } } },
            content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } },
          },
          ...errors,
        },
      },
    },
    '/pets/{petId}': {
      patch: {
        operationId: 'updatePet',
        parameters: [petId],
        requestBody: {
          required: true,
          content: {
            'application/merge-patch+json': {
              schema: { type: 'object', properties: { name: { type: ['string', 'null'] } } },
            },
          },
        },
        responses: {
          '200': {
            description: 'Changed.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
          },
          ...errors,
        },
      },
    },
    '/pets/{petId}/photo': {
      put: {
        operationId: 'putPhoto',
        parameters: [petId],
        requestBody: { required: true, content: { 'image/png': image, 'image/jpeg': jpeg } },
        responses: {
          '201': {
            description: 'Stored a first photo.',
            headers: { Location: { required: true, schema: { type: 'string' } } },
          },
          '204': { description: 'Replaced the photo.' },
          ...errors,
        },
      },
      get: {
        operationId: 'getPhoto',
        parameters: [petId],
        responses: {
          '200': {
            description: 'The photo.',
            headers: { ETag: { required: true, schema: { type: 'string' } } },
            content: { 'image/png': image, 'image/jpeg': jpeg },
          },
          ...errors,
        },
      },
    },
    '/pets/{petId}/note': {
      get: {
        operationId: 'getNote',
        parameters: [petId],
        responses: {
          '200': { description: 'The note.', content: { 'text/plain': { schema: { type: 'string' } } } },
          ...errors,
        },
      },
    },
    '/exports': {
      post: {
        operationId: 'startExport',
        responses: {
          '202': {
            description: 'Started.',
            headers: {
              Location: { required: true, schema: { type: 'string' } },
              'Retry-After': { schema: { type: 'integer' } },
            },
          },
          ...errors,
        },
      },
    },
  },
  components: {
    schemas: {
      PetStatus: { type: 'string', enum: ['available', 'sold'] },
      Pet: {
        type: 'object',
        required: ['id', 'name'],
        properties: {
          id: { type: 'integer' },
          name: { type: 'string' },
          status: { $ref: '#/components/schemas/PetStatus' },
        },
      },
      Problem: {
        type: 'object',
        required: ['code', 'message', 'status'],
        properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } },
      },
    },
  },
};

const client = await generateClient(t, spec);
const { PetStore, PetStoreError } = await client.load();

/** A client of the fixture's package on a scripted fetch; calls an operation by name with its arguments. */
function studio(script: ScriptedAnswer[]) {
  const scripted = scriptedFetch(script);
  const store = new PetStore({ baseUrl: 'https://studio.test/v1', apiKey: 'k', fetch: scripted.fetch, maxRetries: 0 });
  type Method = (...args: unknown[]) => Promise<unknown> & { withResponse(): Promise<Record<string, unknown>> };
  const methods = store as unknown as Record<string, Method>;
  const call = (name: string, ...args: unknown[]) => methods[name]!(...args);
  const withResponse = (name: string, ...args: unknown[]) => methods[name]!(...args).withResponse();
  return { call, withResponse, requests: scripted.requests };
}

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);

t.test('a PUT answering 201 then 204 is told apart, each with its declared headers', async (t) => {
  const { withResponse, call, requests } = studio([
    { status: 201, headers: { location: '/v1/pets/7/photo', 'x-other': 'not declared' } },
    { status: 204 },
    { status: 204 },
  ]);
  const created = await withResponse('putPhoto', 7, png, { contentType: 'image/png' });
  t.match(created, { status: 201, data: undefined, headers: { Location: '/v1/pets/7/photo' } });
  t.same(Object.keys(created['headers'] as object), ['Location'], 'only the declared headers');
  t.equal((created['response'] as Response).headers.get('x-other'), 'not declared', 'the rest on the Response');
  const replaced = await withResponse('putPhoto', 7, png, { contentType: 'image/jpeg' });
  t.match(replaced, { status: 204, data: undefined });
  t.same(replaced['headers'], {});
  t.equal(await call('putPhoto', 7, png, { contentType: 'image/png' }), undefined, 'awaited alone: the body');
  t.same(
    requests.map(({ headers }) => headers.get('content-type')),
    ['image/png', 'image/jpeg', 'image/png'],
    'the bytes go under the media type the caller picked',
  );
  t.same([...requests[0]!.bytes], [...png], 'as they are');
});

t.test("a 202's Location is reachable, its other headers read as their schema types", async (t) => {
  const { withResponse, call } = studio([
    { status: 202, headers: { location: '/v1/exports/e1', 'retry-after': '5' } },
    { status: 202, headers: { 'retry-after': '5' } },
  ]);
  t.match(await withResponse('startExport'), {
    status: 202,
    headers: { Location: '/v1/exports/e1', 'Retry-After': 5 },
  });
  const error = await withResponse('startExport').catch((error: unknown) => error);
  t.ok(error instanceof PetStoreError, 'a 202 without its required Location');
  t.match(error, { status: 202, code: 'unexpected_response', message: /without its header Location/ });
  t.equal(await call('startExport'), undefined, 'the body alone does not need it');
});

t.test('an image answer is a Uint8Array; Accept lists what the operation declares', async (t) => {
  const { withResponse, requests } = studio([
    { status: 200, raw: png, headers: { 'content-type': 'image/png', etag: '"p1"' } },
    // A type the client reads, but not one this answer declares.
    { status: 200, raw: 'not a photo', headers: { 'content-type': 'text/plain', etag: '"p1"' } },
  ]);
  const photo = await withResponse('getPhoto', 7);
  t.ok(photo['data'] instanceof Uint8Array, 'bytes');
  t.same([...(photo['data'] as Uint8Array)], [...png], 'as they came');
  t.same(photo['headers'], { ETag: '"p1"' });
  t.equal(requests[0]!.headers.get('accept'), 'image/png, image/jpeg, application/problem+json;q=0.1');
  const error = await withResponse('getPhoto', 7).catch((error: unknown) => error);
  t.match(error, { code: 'unexpected_response', message: /text\/plain, not image\/png or image\/jpeg/ });
});

t.test('a merge-patch+json body is sent as JSON under its media type; answers are read by Content-Type', async (t) => {
  const pet = { id: 7, name: 'Rex' };
  const { call, requests } = studio([
    { status: 200, raw: JSON.stringify(pet), headers: { 'content-type': 'application/json; charset=utf-8' } },
    { status: 200, raw: 'Likes walks.', headers: { 'content-type': 'text/plain; charset=utf-8' } },
  ]);
  t.same(await call('updatePet', 7, { name: null }), pet);
  t.equal(requests[0]!.headers.get('content-type'), 'application/merge-patch+json');
  t.equal(requests[0]!.body, '{"name":null}');
  t.equal(requests[0]!.headers.get('accept'), 'application/json, application/problem+json;q=0.1');
  t.equal(await call('getNote', 7), 'Likes walks.', 'text/plain is a string');
});

t.test('the results are typed per status from the spec, and misuse does not compile', async (t) => {
  writeFileSync(join(client.dir, 'src/fixtureUse.ts'), fixtureUse);
  t.equal(await client.typecheck(), '', 'tsc: no error, and every @ts-expect-error met its error');
});

// Type-checked in the fixture's package.
const fixtureUse = `import { PetStore, type Pet } from './index.js';

const store = new PetStore({ baseUrl: 'https://studio.test/v1', apiKey: 'k' });
const png = new Uint8Array([1]);
export async function use(): Promise<string> {
  const stored = await store.putPhoto(7, png, { contentType: 'image/png' }).withResponse();
  if (stored.status === 201) {
    const location: string = stored.headers.Location;
    return location;
  }
  // @ts-expect-error a 204 declares no Location
  const none: string = stored.headers.Location;
  const nothing: undefined = stored.data;
  const job = await store.startExport().withResponse();
  const wait: number | undefined = job.headers['Retry-After'];
  const photo: Uint8Array = await store.getPhoto(7);
  const tag: string = (await store.getPhoto(7).withResponse()).headers.ETag;
  const note: string = await store.getNote(7);
  const pet: Pet = await store.updatePet(7, { name: null });
  const asPromise: Promise<Pet> = store.updatePet(7, { name: 'Rex' });
  // @ts-expect-error a body of several media types needs its contentType
  await store.putPhoto(7, png);
  // @ts-expect-error only the declared media types
  await store.putPhoto(7, png, { contentType: 'image/gif' });
  // @ts-expect-error bytes, not JSON
  await store.putPhoto(7, { name: 'Rex' }, { contentType: 'image/png' });
  // @ts-expect-error a 202 is the only status startExport declares
  if (job.status === 200) return '';
  return [none, nothing, wait, photo, tag, note, pet, asPromise].join();
}
`;
