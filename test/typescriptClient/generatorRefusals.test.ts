import t from 'tap';
import { apiTypesSource, untypedBodies } from '../../generators/apiTypes.js';
import { clientOperations } from '../../generators/clientOperations.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';

// The client generator sends every parameter an operation declares, or refuses the spec naming the one it
// cannot send: never a method that silently drops a part of the request.

const withParameters = (parameters: unknown[]): JsonObject =>
  ({
    openapi: '3.1.0',
    paths: {
      '/things/{thingId}': {
        put: {
          operationId: 'putThing',
          parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'string' } }, ...parameters],
          responses: { '200': { description: 'ok' }, '304': { description: 'not modified' } },
        },
      },
    },
  }) as JsonObject;

t.test('optional headers are options named in camelCase; a 304 is noted', async (t) => {
  const [operation] = clientOperations(
    withParameters([
      { name: 'If-Match', in: 'header', schema: { type: 'string' } },
      { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
      { name: 'X-Dry-Run', in: 'header', schema: { type: 'boolean' } },
      { name: 'Prefer', in: 'header', schema: { enum: ['return=minimal', 'return=representation'] } },
      { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } },
    ]),
  );
  t.same(operation?.optionalHeaders, [
    { header: 'If-Match', option: 'ifMatch' },
    { header: 'If-None-Match', option: 'ifNoneMatch' },
    { header: 'X-Dry-Run', option: 'xDryRun' },
    { header: 'Prefer', option: 'prefer' },
  ]);
  t.equal(operation?.idempotencyKey, true);
  t.equal(operation?.notModified, true);
});

t.test('a parameter the client cannot send is a generation error naming it', async (t) => {
  for (const [parameter, message] of [
    [{ name: 'session', in: 'cookie', schema: { type: 'string' } }, /putThing: optional cookie session/],
    [{ name: 'session', in: 'cookie', required: true, schema: { type: 'string' } }, /required cookie session/],
    [
      { name: 'X-Tags', in: 'header', schema: { type: 'array', items: { type: 'string' } } },
      /optional header X-Tags: not one scalar/,
    ],
    [
      { name: 'X-Filter', in: 'header', content: { 'application/json': { schema: { type: 'object' } } } },
      /header X-Filter: not one scalar/,
    ],
    [{ name: 'X-Any', in: 'header' }, /optional header X-Any: not one scalar/],
    [
      { name: 'Signal', in: 'header', schema: { type: 'string' } },
      /header parameter Signal would be the option signal/,
    ],
    [{ name: 'X_Odd', in: 'header', schema: { type: 'string' } }, /optional header X_Odd/],
  ] as const) {
    t.throws(() => clientOperations(withParameters([parameter])), { message }, parameter.name);
  }
  t.throws(
    () =>
      clientOperations(
        withParameters([
          { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
          { name: 'x-trace', in: 'header', schema: { type: 'string' } },
        ]),
      ),
    { message: /two header parameters would be the option xTrace/ },
  );
});

// The types of bodies (generators/apiTypes.ts): a field renamed the usual way is a union, and a body schema
// openapi-typescript would type `unknown` is refused, named.
const withBody = (schemas: Record<string, unknown>, body: unknown): JsonObject =>
  ({
    openapi: '3.1.0',
    info: { title: 'fixture', version: '1.0.0' },
    paths: {
      '/pets': {
        post: {
          operationId: 'createPet',
          requestBody: { required: true, content: { 'application/json': { schema: body } } },
          responses: { '201': { description: 'ok', content: { 'application/json': { schema: body } } } },
        },
      },
    },
    components: { schemas },
  }) as JsonObject;

const renamed = {
  type: 'object',
  additionalProperties: false,
  required: ['categoryId'],
  properties: {
    name: { type: 'string', deprecated: true },
    displayName: { type: 'string' },
    categoryId: { type: 'integer' },
  },
  anyOf: [{ required: ['name'] }, { required: ['displayName'] }],
};

t.test('a field renamed with anyOf requiring either is a union of the two objects, not unknown', async (t) => {
  const source = await apiTypesSource(withBody({ NewPet: renamed }, { $ref: '#/components/schemas/NewPet' }));
  const newPet = source.slice(source.indexOf('NewPet: '), source.indexOf('responses: never'));
  t.notMatch(newPet, 'unknown');
  t.match(newPet, /\{[^}]*name: string;[^}]*displayName\?: string;[^}]*categoryId: number;[^}]*\} \| \{/);
  t.match(newPet, /\} \| \{[^}]*name\?: string;[^}]*displayName: string;[^}]*categoryId: number;/);
});

t.test('a body schema typed unknown fails generation, naming where it is', async (t) => {
  for (const [schemas, body, named] of [
    [{}, {}, '#/paths/~1pets/post/requestBody/content/application~1json/schema'],
    [
      { Loose: { anyOf: [{ required: ['a'] }, { required: ['b'] }] } },
      { $ref: '#/components/schemas/Loose' },
      '#/components/schemas/Loose/anyOf/0',
    ],
    [
      { Thing: { type: 'object', properties: { anything: {} } } },
      { $ref: '#/components/schemas/Thing' },
      '#/components/schemas/Thing/properties/anything',
    ],
    [
      { Either: { oneOf: [{ type: 'string' }, { not: { type: 'string' } }] } },
      { $ref: '#/components/schemas/Either' },
      '#/components/schemas/Either/oneOf/1',
    ],
  ] as const) {
    await t.rejects(
      apiTypesSource(withBody(schemas, body)),
      { message: new RegExp(`typed unknown.*${named.replace(/[~/]/g, '\\$&')}`) },
      named,
    );
  }
  t.same(
    untypedBodies(withBody({ NewPet: renamed }, { $ref: '#/components/schemas/NewPet' })),
    ['#/components/schemas/NewPet/anyOf/0', '#/components/schemas/NewPet/anyOf/1'],
    'the rename is untyped as written: the typing view is what makes it a union',
  );
});

// Media types: what the client's codecs speak (clients/typescript/src/mediaTypes.ts) goes through; any other
// fails generation naming the operation and the construct.
const withContent = (body: unknown, answer: unknown, headers: unknown = {}): JsonObject =>
  ({
    openapi: '3.1.0',
    paths: {
      '/things/{thingId}': {
        put: {
          operationId: 'putThing',
          parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'string' } }],
          ...(body === undefined ? {} : { requestBody: { required: true, content: body } }),
          responses: {
            '200': { description: 'ok', headers, ...(answer === undefined ? {} : { content: answer }) },
            '400': { description: 'no', content: { 'application/problem+json': { schema: { type: 'object' } } } },
          },
        },
      },
    },
  }) as JsonObject;
const string = { schema: { type: 'string' } };

t.test('bodies in JSON, +json, bytes and text are read with their media types and Accept', async (t) => {
  const [operation] = clientOperations(
    withContent({ 'image/png': string, 'image/jpeg': string }, { 'text/plain': string, 'image/*': string }),
  );
  t.same(operation?.body, { required: true, mediaTypes: ['image/png', 'image/jpeg'], codec: 'bytes' });
  t.same(operation?.success[0]?.mediaTypes, ['text/plain', 'image/*']);
  t.equal(operation?.accept, 'text/plain, image/*, application/problem+json;q=0.1');
  const [patch] = clientOperations(withContent({ 'application/merge-patch+json': string }, undefined));
  t.same(patch?.body?.codec, 'json');
  t.equal(patch?.accept, 'application/problem+json;q=0.1', 'a bodiless success asks for its errors only');
});

t.test('a media type or response header the client cannot handle is a generation error naming it', async (t) => {
  for (const [spec, message] of [
    [withContent({ 'multipart/form-data': string }, undefined), /putThing: a request body in multipart\/form-data/],
    [
      withContent({ 'application/x-www-form-urlencoded': string }, undefined),
      /putThing: a request body in application\/x-www-form-urlencoded/,
    ],
    [withContent(undefined, { 'text/html': string }), /putThing: a 200 answer in text\/html/],
    [
      withContent({ 'application/json': string, 'application/octet-stream': string }, undefined),
      /putThing: a request body in application\/json, application\/octet-stream, which the client would send/,
    ],
    [withContent({ 'image/*': string }, undefined), /putThing: a request body in image\/\*, a range/],
    [
      withContent(undefined, undefined, { 'X-Tags': { schema: { type: 'array', items: { type: 'string' } } } }),
      /putThing: the 200 answer's header X-Tags: not one scalar/,
    ],
  ] as const)
    t.throws(() => clientOperations(spec), { message }, String(message));
});
