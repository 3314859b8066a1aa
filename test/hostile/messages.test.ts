import t from 'tap';
import { parse } from 'yaml';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import { ApiError, type ErrorCode } from '../../src/errors.js';
import { excerpt } from '../../src/http/errors/excerpt.js';
import { allowList, undeclaredMethodOn } from '../helpers/methods.js';
import { startSpecApp } from '../helpers/specApp.js';
import { assertErrorAnswer, interceptQueries, rawRequest, startHostileApp } from './harness.js';

t.test('an echoed name, path or value is a short escaped excerpt', async (t) => {
  t.equal(excerpt('short'), 'short');
  t.equal(excerpt('a"b\\c\n\u0000'), 'a\\"b\\\\c\\n\\u0000', 'quotes, backslashes and controls are escaped');
  const cut = excerpt('x'.repeat(5000));
  t.ok(cut.length < 80, `5,000 characters become ${cut.length}`);
  t.match(cut, /\(5000 characters\)$/, 'and say how long the input was');
  t.equal(excerpt('😀'.repeat(50)).startsWith('😀'.repeat(40)), true, 'cut between code points, not inside one');
});

t.test('long client input never makes a long or unserializable message', async (t) => {
  const h = await startHostileApp(t);
  const auth = { Authorization: `Bearer ${h.key}` };
  const json = { ...auth, 'Content-Type': 'application/json' };

  await t.test('a 1,000-character unknown property name: 400, not 500', async (t) => {
    const body = JSON.stringify({ name: 'a', categoryId: 1, ['x'.repeat(1000)]: 1 });
    const response = await h.send(rawRequest('POST /v1/pets HTTP/1.1', json, body));
    const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    t.match(error['message'], /must not have property 'x{40}\.\.\. \(1000 characters\)'/);
  });

  await t.test('a property name with quotes and control characters is escaped', async (t) => {
    const body = JSON.stringify({ name: 'a', categoryId: 1, "e'vil\n\u0007": 1 });
    const response = await h.send(rawRequest('POST /v1/pets HTTP/1.1', json, body));
    const error = await assertErrorAnswer(t, h, response, 400, 'invalid_request');
    t.match(error['message'], "'e'vil\\n\\u0007'");
  });

  await t.test('a 5,000-character unknown path: a short 404', async (t) => {
    const response = await h.send(rawRequest(`GET /v1/${'p'.repeat(5000)} HTTP/1.1`, auth));
    const error = await assertErrorAnswer(t, h, response, 404, 'not_found');
    t.ok(String(error['message']).length < 200);
  });

  // The router reads a parameter of at most 100 characters (fastify's maxParamLength): a longer one is its 414
  // before any step can answer a 405, wherever a route of that method has a parameter in that place (below).
  await t.test(
    'a path parameter as long as the router reads, with the wrong method: a 405 quoting it cut',
    async (t) => {
      const { method, allowed, url } = undeclaredMethodOn('/pets/{petId}');
      const response = await h.send(rawRequest(`${method} ${url.replace('{petId}', 'x'.repeat(100))} HTTP/1.1`, auth));
      const error = await assertErrorAnswer(t, h, response, 405, 'method_not_allowed');
      t.match(error['message'], /\.\.\. \(\d+ characters\)/, 'the path cut, its length said');
      t.same(allowList(response.headers['allow']), allowed);
    },
  );

  await t.test('a 5,000-character path parameter: a short 414', async (t) => {
    const response = await h.send(rawRequest(`GET /v1/pets/${'x'.repeat(5000)} HTTP/1.1`, auth));
    const error = await assertErrorAnswer(t, h, response, 414, 'invalid_request');
    t.ok(String(error['message']).length < 200);
  });
});

// A spec of this test's own: /pets/{petId} takes GET only, and PUT is declared under it, on its photo.
const photoUnderPet = parse(`
openapi: 3.1.0
info: { title: Photo under a pet, version: 1.0.0 }
servers: [{ url: 'http://localhost/v1' }]
paths:
  /pets/{petId}:
    get:
      operationId: getPet
      parameters: [{ name: petId, in: path, required: true, schema: { type: string } }]
      responses: { '204': { description: Found } }
  /pets/{petId}/photo:
    put:
      operationId: putPhoto
      parameters: [{ name: petId, in: path, required: true, schema: { type: string } }]
      responses: { '204': { description: Stored } }
components:
  securitySchemes: {}
`) as OpenApiDocument;

t.test('a method undeclared on a path: 405, unless its parameter is longer than the router reads (414)', async (t) => {
  const found = async () => ({ status: 204 });
  const app = await startSpecApp(t, photoUnderPet, { getPet: found, putPhoto: found });
  const put = (petId: string) => app.inject({ method: 'PUT', url: `/v1/pets/${petId}` });
  const read = await put('x'.repeat(100));
  t.equal(read.statusCode, 405, 'a parameter of 100 characters: 405');
  t.equal(read.headers['allow'], 'GET');
  // PUT's routes have a parameter after /pets/ (the photo's): the router reads it there, and refuses its length.
  const refused = await put('x'.repeat(101));
  t.equal(refused.statusCode, 414, 'of 101: 414, before any step could answer the 405');
  t.match(refused.json(), { code: 'invalid_request', message: /longer than 100 characters/ });
});

/** Statements about pets fail with an error whose body breaks the contract (a stand-in for a bug). */
const brokenErrorBody = interceptQueries((statement, run) =>
  /\bpets\b/.test(statement.text)
    ? Promise.reject(new ApiError(404, 'not_a_documented_code' as ErrorCode, 'A bug made this error.'))
    : run(),
);

t.test('an error body that fails to serialize is still a logged 500 Error object', async (t) => {
  const h = await startHostileApp(t, {}, 'embedded', brokenErrorBody);
  const response = await h.send(rawRequest('GET /v1/pets/1 HTTP/1.1', { Authorization: `Bearer ${h.key}` }));
  const error = await assertErrorAnswer(t, h, response, 500, 'internal_error');
  t.equal(error['message'], 'Internal server error.');
  const failure = h
    .logLines()
    .find((line) => line['requestId'] === response.headers['x-request-id'] && line['msg'] === 'request failed');
  t.equal(failure?.['level'], 50, 'logged as an error');
});
