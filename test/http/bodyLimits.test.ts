import t from 'tap';
import type { AddressInfo } from 'node:net';
import { parse } from 'yaml';
import { bodyLimitOf } from '../../src/http/operations/bodyLimit.js';
import type { OpenApiDocument, OperationObject } from '../../src/openapi/document.js';
import { rawExchange } from '../helpers/conditionalOperations.js';
import { startSpecApp } from '../helpers/specApp.js';

// The size of a request body is the operation's, as the spec declares it (x-body-limit-bytes on its
// requestBody), else the server's: fastify stops reading past it, and the 413, whether the body was
// read too far or refused by its Content-Length before 100 Continue, quotes that operation's size.

const post = (operationId: string, limit: string) => `
    post:
      operationId: ${operationId}
      requestBody:
        required: true${limit}
        content: { application/json: { schema: { $ref: '#/components/schemas/Note' } } }
      responses:
        '200': { description: Read, content: { application/json: { schema: { $ref: '#/components/schemas/Note' } } } }
        '400': { $ref: '#/components/responses/Error' }
        '413': { $ref: '#/components/responses/Error' }`;

const spec = parse(`
openapi: 3.1.0
info: { title: Notes, version: 1.0.0 }
servers: [{ url: 'http://localhost/v1' }]
paths:
  /small:${post('postSmall', '\n        x-body-limit-bytes: 200')}
  /large:${post('postLarge', '')}
components:
  securitySchemes: {}
  schemas:
    Note: { type: object, additionalProperties: false, properties: { text: { type: string, maxLength: 200000 } } }
    Error:
      type: object
      additionalProperties: false
      required: [code, message, status]
      properties:
        code: { type: string, enum: [invalid_request, payload_too_large, internal_error] }
        message: { type: string }
        status: { type: integer }
  responses:
    Error:
      description: An error
      content: { application/json: { schema: { $ref: '#/components/schemas/Error' } } }
`) as OpenApiDocument;

const echo = async ({ body }: { body: { text?: string } }) => ({ status: 200, body });

async function notesApp(t: Parameters<typeof startSpecApp>[0]) {
  return startSpecApp(t, spec, { postSmall: echo, postLarge: echo });
}

const note = (bytes: number) => ({ text: 'x'.repeat(bytes - '{"text":""}'.length) });

t.test("each operation's body may be as large as its spec says, and its 413 says how large", async (t) => {
  const app = await notesApp(t);
  const send = (url: string, bytes: number) =>
    app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: note(bytes) });
  t.equal((await send('/v1/small', 200)).statusCode, 200, 'at the declared size');
  const over = await send('/v1/small', 201);
  t.equal(over.statusCode, 413, 'a byte over it');
  t.same(over.json(), {
    code: 'payload_too_large',
    message: 'The request body is larger than 200 bytes.',
    status: 413,
  });
  t.equal((await send('/v1/large', 201)).statusCode, 200, 'the other operation keeps the server limit');
  t.equal((await send('/v1/large', 65536)).statusCode, 200);
  const large = await send('/v1/large', 65537);
  t.equal(large.statusCode, 413);
  t.equal(large.json().message, 'The request body is larger than 65536 bytes.');
});

t.test('Expect: 100-continue is refused by the declared size, before the body is sent', async (t) => {
  const app = await notesApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const expect = (url: string, length: number) =>
    rawExchange(port, [`POST ${url} HTTP/1.1`, 'Content-Type: application/json', 'Expect: 100-continue'], '', length);
  const refused = await expect('/v1/small', 201);
  t.match(refused, /^HTTP\/1\.1 413 /, 'no 100 Continue: the answer comes first');
  t.match(refused, /larger than 200 bytes/);
  t.match(await expect('/v1/large', 201), /^HTTP\/1\.1 100 Continue/, 'within the server limit: go on');
});

t.test('a declared size that is not a positive integer of bytes stops the start', async (t) => {
  const operation = (value: unknown) =>
    ({ operationId: 'op', requestBody: { 'x-body-limit-bytes': value } }) as unknown as OperationObject;
  t.equal(bodyLimitOf(operation(1024)), 1024);
  for (const value of [0, -1, 1.5, '1024', null])
    t.throws(() => bodyLimitOf(operation(value)), /x-body-limit-bytes/, JSON.stringify(value));
});
