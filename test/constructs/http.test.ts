import t, { type Test } from 'tap';
import type { AcceptedKey, KeyChecker } from '../../src/auth/keyChecker.js';
import { identifyCaller, requireAuthentication, verifyKey } from '../../src/http/admission/authentication.js';
import { responseHeadersFor } from '../../src/http/arrival/securityHeaders.js';
import { entityTagOf } from '../../src/entityTags.js';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import { constructExample } from '../helpers/constructExamples.js';
import { startSpecApp } from '../helpers/specApp.js';

// The HTTP layer (routing, parsing, validation, answers, admission), each construct on the catalogue's example
// spec with a handler of the test's own: the construct is read from the request, or answered, as the spec says.

type Input = Record<string, unknown>;

/** The example's app; its one handler records its input and gives `result`. */
async function exampleApp(t: Test, id: string, result: (input: Input) => unknown = () => ({ status: 200 })) {
  const inputs: Input[] = [];
  const app = await startSpecApp(
    t,
    constructExample(id) as unknown as OpenApiDocument,
    {
      example: async (input: Input) => {
        inputs.push(input);
        return result(input);
      },
    },
    (route) => [responseHeadersFor(route), ...(route.securitySchemes.length > 0 ? admission : [])],
  );
  return { app, inputs };
}

const keys: Record<string, AcceptedKey> = {
  reader: { keyId: 1, keyHash: 'reader', scopes: ['things:read'], expiresAt: null },
  other: { keyId: 2, keyHash: 'other', scopes: ['things:write'], expiresAt: null },
};
const checker: KeyChecker = {
  remembered: (key) => keys[key],
  lookUp: () => Promise.resolve('unknown'),
  forget: () => undefined,
  close: () => undefined,
};
const admission = [identifyCaller(checker), verifyKey(checker), requireAuthentication];
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

t.test('media-json', async (t) => {
  const { app, inputs } = await exampleApp(t, 'media-json', () => ({ status: 200, body: { name: 'b' } }));
  const sent = await app.inject({ method: 'POST', url: '/v1/things', payload: { name: 'a' } });
  t.equal(sent.statusCode, 200);
  t.same(inputs[0]?.['body'], { name: 'a' });
  t.match(sent.headers['content-type'], /^application\/json/);
  t.same(sent.json(), { name: 'b' });
  const other = await app.inject({
    method: 'POST',
    url: '/v1/things',
    headers: { 'content-type': 'text/plain' },
    payload: 'name=a',
  });
  t.equal(other.statusCode, 415);
  t.match(other.json(), { code: 'unsupported_media_type', status: 415 });
  const suffix = await app.inject({
    method: 'POST',
    url: '/v1/things',
    headers: { 'content-type': 'application/merge-patch+json' },
    payload: JSON.stringify({ name: 'x'.repeat(30) }),
  });
  t.equal(suffix.statusCode, 415, 'another JSON type is refused, never passed on unvalidated');
  const png = await app.inject({
    method: 'POST',
    url: '/v1/things',
    headers: { 'content-type': 'image/png' },
    payload: Buffer.from([0x89, 0x50, 0x4e, 0x47]),
  });
  t.equal(png.statusCode, 415, 'bytes the service reads elsewhere are refused where JSON is declared');
  t.match(png.json(), { message: 'The request body must be sent as Content-Type: application/json.' });
  t.equal(inputs.length, 1);
});

t.test('media-json-suffix', async (t) => {
  const { app, inputs } = await exampleApp(t, 'media-json-suffix', () => ({ status: 200, body: { name: 'b' } }));
  const patch = (type: string, payload: object) =>
    app.inject({
      method: 'PATCH',
      url: '/v1/things',
      headers: { 'content-type': type },
      payload: JSON.stringify(payload),
    });
  const sent = await patch('application/merge-patch+json', { name: 'a' });
  t.equal(sent.statusCode, 200);
  t.same(inputs[0]?.['body'], { name: 'a' }, 'parsed as JSON');
  t.equal(sent.headers['content-type'], 'application/vnd.example+json; charset=utf-8', 'answered as declared');
  t.same(sent.json(), { name: 'b' });
  const long = await patch('application/merge-patch+json; charset=utf-8', { name: 'x'.repeat(21) });
  t.equal(long.statusCode, 400, 'validated against its schema');
  const plain = await patch('application/json', { name: 'a' });
  t.equal(plain.statusCode, 415, 'a JSON type the operation does not declare');
  t.match(plain.json(), {
    code: 'unsupported_media_type',
    message: 'The request body must be sent as Content-Type: application/merge-patch+json.',
    status: 415,
  });
  t.equal(inputs.length, 1);
});

t.test('media-bytes', async (t) => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
  const answered = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xfe, 0x00]);
  const { app, inputs } = await exampleApp(t, 'media-bytes', () => ({ status: 200, body: answered }));
  const put = (type: string, payload: string | Buffer, headers: Record<string, string> = {}) =>
    app.inject({ method: 'PUT', url: '/v1/things', headers: { 'content-type': type, ...headers }, payload });
  const sent = await put('image/png', png);
  t.equal(sent.statusCode, 200);
  t.ok(Buffer.isBuffer(inputs[0]?.['body']), 'the handler gets a Buffer');
  t.same(inputs[0]?.['body'], png, 'the bytes as sent, never decoded');
  t.equal(sent.headers['content-type'], 'image/png', 'answered as the status declares');
  t.same(sent.rawPayload, answered, 'the bytes answered as they are');
  const jpeg = await put('image/jpeg', png);
  t.equal(jpeg.statusCode, 415, 'a bytes type the operation does not declare');
  t.match(jpeg.json(), {
    code: 'unsupported_media_type',
    message: 'The request body must be sent as Content-Type: image/png.',
    status: 415,
  });
  t.equal((await put('application/json', '{"name":"a"}')).statusCode, 415, 'JSON to a bytes route');
  const large = await put('image/png', Buffer.alloc(1025, 0xff));
  t.equal(large.statusCode, 413, 'over x-body-limit-bytes');
  t.match(large.json(), { code: 'payload_too_large', message: /\b1024 bytes/, status: 413 });
  t.equal((await put('image/png', Buffer.alloc(1024, 0xff))).statusCode, 200, 'up to x-body-limit-bytes');
  const gzipped = await put('image/png', png, { 'content-encoding': 'gzip' });
  t.equal(gzipped.statusCode, 415, 'a Content-Encoding the service does not undo');
  t.match(gzipped.json(), { code: 'unsupported_media_type', status: 415 });
  const empty = await app.inject({ method: 'PUT', url: '/v1/things' });
  t.equal(empty.statusCode, 400, 'the required body is missing');
  t.match(empty.json(), { message: 'The request body is required: send it with Content-Type: image/png.' });
  const unlabelled = await app.inject({ method: 'PUT', url: '/v1/things', payload: png });
  t.equal(unlabelled.statusCode, 415, 'bytes without a Content-Type');
  t.match(unlabelled.json(), { message: 'The request body must be sent as Content-Type: image/png.' });
  t.equal(inputs.length, 2);
});

t.test('media-bytes without a schema: raw bytes all the same', async (t) => {
  const spec = structuredClone(constructExample('media-bytes')) as unknown as OpenApiDocument;
  const put = spec.paths['/things']!['put'] as unknown as {
    requestBody: { content: Record<string, object> };
    responses: Record<string, { content?: Record<string, object> }>;
  };
  put.requestBody.content = { 'image/png': {} };
  put.responses['200']!.content = { 'image/png': {} };
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
  const app = await startSpecApp(t, spec, { example: (input: Input) => Promise.resolve({ status: 200, ...input }) });
  const sent = await app.inject({
    method: 'PUT',
    url: '/v1/things',
    headers: { 'content-type': 'image/png' },
    payload: png,
  });
  t.equal(sent.statusCode, 200);
  t.equal(sent.headers['content-type'], 'image/png');
  t.same(sent.rawPayload, png);
});

t.test('media-bytes answered: anything but bytes breaks the contract', async (t) => {
  const { app } = await exampleApp(t, 'media-bytes', (input) => ({ status: 200, body: String(input['body']) }));
  const sent = await app.inject({
    method: 'PUT',
    url: '/v1/things',
    headers: { 'content-type': 'image/png' },
    payload: Buffer.from('png'),
  });
  t.equal(sent.statusCode, 500);
  t.match(sent.json(), { code: 'internal_error', status: 500 });
});

t.test('media-bytes tagged: the ETag is over the bytes answered, and If-None-Match answers 304', async (t) => {
  // The example's answer, read by a GET that declares ETag and 304.
  const spec = constructExample('media-bytes') as unknown as OpenApiDocument;
  const put = spec.paths['/things']!['put'] as { responses: Record<string, { headers?: object }> };
  const get = {
    operationId: 'example',
    responses: {
      '200': { ...put.responses['200'], headers: { ETag: { schema: { type: 'string' } } } },
      '304': { description: 'Not Modified' },
    },
  };
  let answered = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
  const app = await startSpecApp(t, { ...spec, paths: { '/things': { get } } } as unknown as OpenApiDocument, {
    example: () => Promise.resolve({ status: 200, body: answered }),
  });
  const read = (headers: Record<string, string> = {}) => app.inject({ url: '/v1/things', headers });
  const first = await read();
  t.equal(first.statusCode, 200);
  t.same(first.rawPayload, answered);
  t.equal(first.headers['etag'], entityTagOf(answered), 'the tag of the bytes answered');
  const unchanged = await read({ 'if-none-match': String(first.headers['etag']) });
  t.equal(unchanged.statusCode, 304);
  t.equal(unchanged.rawPayload.length, 0);
  // 0xff and 0xfe read alike as UTF-8 (U+FFFD): a tag over text would not see the change.
  answered = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xfe]);
  const changed = await read({ 'if-none-match': String(first.headers['etag']) });
  t.equal(changed.statusCode, 200);
  t.not(changed.headers['etag'], first.headers['etag']);
  const link = '</v1/things?page=2>; rel="next"';
  t.not(entityTagOf(Buffer.from([0xff]), link), entityTagOf(Buffer.from([0xfe]), link), 'and beside a Link too');
});

t.test('param-path-simple', async (t) => {
  const { app, inputs } = await exampleApp(t, 'param-path-simple');
  t.equal((await app.inject({ url: '/v1/things/abc' })).statusCode, 200);
  t.same(inputs[0]?.['params'], { id: 'abc' });
  t.equal((await app.inject({ url: `/v1/things/${'x'.repeat(21)}` })).statusCode, 400, 'checked against its schema');
});

t.test('param-query-form', async (t) => {
  const { app, inputs } = await exampleApp(t, 'param-query-form');
  await app.inject({ url: '/v1/things?tag=a&tag=b' });
  await app.inject({ url: '/v1/things?tag=a' });
  t.same(
    inputs.map((input) => input['query']),
    [{ tag: ['a', 'b'] }, { tag: ['a'] }],
  );
});

t.test('param-header-simple', async (t) => {
  const { app, inputs } = await exampleApp(t, 'param-header-simple');
  t.equal((await app.inject({ url: '/v1/things', headers: { 'x-tag': 'hello' } })).statusCode, 200);
  t.same(inputs[0]?.['headers'], { 'X-Tag': 'hello' });
  const long = await app.inject({ url: '/v1/things', headers: { 'x-tag': 'x'.repeat(21) } });
  t.equal(long.statusCode, 400);
});

t.test('schema-closed-object', async (t) => {
  const { app } = await exampleApp(t, 'schema-closed-object', () => ({ status: 200, body: { name: 'a', extra: 1 } }));
  const extra = await app.inject({ method: 'POST', url: '/v1/things', payload: { name: 'a', extra: 1 } });
  t.equal(extra.statusCode, 400);
  t.match(extra.json(), { code: 'invalid_request', status: 400 });
  const answered = await app.inject({ method: 'POST', url: '/v1/things', payload: { name: 'a' } });
  t.equal(answered.statusCode, 500, 'an answer with a property its schema closes out is not sent');
});

t.test('response-created', async (t) => {
  const { app } = await exampleApp(t, 'response-created', () => ({ status: 201, body: { name: 'a' } }));
  const created = await app.inject({ method: 'POST', url: '/v1/things' });
  t.equal(created.statusCode, 201);
  t.same(created.json(), { name: 'a' });
});

t.test('response-headers', async (t) => {
  const { app } = await exampleApp(t, 'response-headers', () => ({
    status: 201,
    headers: { Location: '/v1/things/a' },
  }));
  const created = await app.inject({ method: 'POST', url: '/v1/things' });
  t.equal(created.statusCode, 201);
  t.equal(created.headers['location'], '/v1/things/a');
});

t.test('response-links', async (t) => {
  const { app } = await exampleApp(t, 'response-links', () => ({ status: 200, body: { id: 'a' } }));
  const answered = await app.inject({ url: '/v1/things' });
  t.equal(answered.statusCode, 200);
  t.same(answered.json(), { id: 'a' });
});

t.test('servers-root', async (t) => {
  const { app } = await exampleApp(t, 'servers-root');
  t.equal((await app.inject({ url: '/v1/things' })).statusCode, 200, 'served under the path of servers[0]');
  t.equal((await app.inject({ url: '/things' })).statusCode, 404, 'and only there');
});

t.test('security-bearer', async (t) => {
  const { app } = await exampleApp(t, 'security-bearer');
  const missing = await app.inject({ url: '/v1/things' });
  t.equal(missing.statusCode, 401);
  t.match(missing.json(), { code: 'unauthorized', status: 401 });
  t.equal((await app.inject({ url: '/v1/things', headers: bearer('nobody') })).statusCode, 401);
  t.equal((await app.inject({ url: '/v1/things', headers: bearer('reader') })).statusCode, 200);
});

t.test('security-scopes', async (t) => {
  const { app } = await exampleApp(t, 'security-scopes');
  t.equal((await app.inject({ url: '/v1/things', headers: bearer('reader') })).statusCode, 200);
  const lacking = await app.inject({ url: '/v1/things', headers: bearer('other') });
  t.equal(lacking.statusCode, 403);
  t.match(lacking.json(), { status: 403 });
});

t.test('deprecated-operation', async (t) => {
  const { app } = await exampleApp(t, 'deprecated-operation');
  const answered = await app.inject({ url: '/v1/things' });
  t.equal(answered.statusCode, 200);
  t.equal(answered.headers['deprecation'], `@${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
});

t.test('schema-any-of', async (t) => {
  const { app, inputs } = await exampleApp(t, 'schema-any-of', (input) => ({ status: 200, body: input['body'] }));
  const post = (payload: object) => app.inject({ method: 'POST', url: '/v1/things', payload });
  const named = await post({ name: 'a', status: 'sold' });
  t.equal(named.statusCode, 200, 'a body of the first branch ($ref) passes');
  t.same(named.json(), { name: 'a', status: 'sold' });
  t.equal((await post({ title: 't' })).statusCode, 200, 'a body of the second branch passes');
  t.equal((await post({ name: 'a', status: 3 })).statusCode, 200, 'a property of either of its branches passes');
  const neither = await post({ other: 'x' });
  t.equal(neither.statusCode, 400, 'a body of no branch is refused');
  t.match(neither.json(), { code: 'invalid_request', message: String, status: 400 });
  t.equal((await post({ name: 'a', status: 'lost' })).statusCode, 400, 'a property of no branch is refused');
  t.equal(inputs.length, 3);
});
