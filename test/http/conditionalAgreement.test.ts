import fc from 'fast-check';
import t from 'tap';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Precondition } from '../../src/entityTags.js';
import { loadContract } from '../../lib/conformance/spec.js';
import { valid } from '../../lib/conformance/arbitraries.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { errorResult } from '../../src/handlers/errorResult.js';
import { loadOpenApiDocument, type OpenApiDocument } from '../../src/openapi/document.js';
import { startTestApp } from '../helpers/app.js';
import { conditionalOperations, malformedEntityTagFields, rawRequest } from '../helpers/conditionalOperations.js';
import { conditionalSpec } from '../helpers/conditionalSpec.js';
import { startSpecApp } from '../helpers/specApp.js';

// Conditional requests agree with GET (RFC 9110, 13): the tag a write's precondition compares with is
// the one GET answered, whatever headers the HTTP layer adds to GET (a deprecation's Link); and a
// malformed If-Match or If-None-Match is refused (400) on every operation that honours it, before
// anything is written.

interface Thing {
  id: string;
  name: string;
}
interface Input {
  params: { thingId: string };
  body: { name: string };
  precondition: Precondition<Thing>;
}

/** conditionalSpec with getThing deprecated: its answers carry Deprecation and a Link the HTTP layer adds. */
function deprecatedThingsSpec(): OpenApiDocument {
  const spec = structuredClone(conditionalSpec);
  const get = spec.paths['/things/{thingId}']?.['get'];
  if (get === undefined) throw new Error('conditionalSpec has no getThing');
  Object.assign(get, { deprecated: true, 'x-deprecated-at': '2026-01-01T00:00:00Z', 'x-deprecation-docs': '/docs' });
  const thing = spec.components.responses?.['Thing'];
  thing!.headers = {
    ...thing!.headers,
    Deprecation: { schema: { type: 'string' } },
    Link: { schema: { type: 'string' } },
  };
  return spec;
}

function thingsApp(t: Parameters<typeof startSpecApp>[0], spec: OpenApiDocument): Promise<FastifyInstance> {
  const store = new Map<string, Thing>();
  const failed = () => errorResult(412, 'precondition_failed' as never, 'The thing has changed.');
  const put = async ({ params, body, precondition }: Input) => {
    const current = store.get(params.thingId);
    if (!precondition.isMetBy(current)) return failed();
    store.set(params.thingId, { id: params.thingId, name: body.name });
    return { status: current ? 200 : 201, body: store.get(params.thingId) };
  };
  return startSpecApp(t, spec, {
    getThing: async ({ params }: Input) => {
      const current = store.get(params.thingId);
      return current ? { status: 200, body: current } : errorResult(404, 'not_found', 'No such thing.');
    },
    putThing: put,
    sloppyPut: put,
    deleteThing: async ({ params, precondition }: Input) => {
      const current = store.get(params.thingId);
      if (!current) return errorResult(404, 'not_found', 'No such thing.');
      if (!precondition.isMetBy(current)) return failed();
      store.delete(params.thingId);
      return { status: 204 };
    },
  });
}

const json = { 'content-type': 'application/json' };

t.test("a deprecated GET's ETag, Link and all, is what If-Match on its resource matches", async (t) => {
  const app = await thingsApp(t, deprecatedThingsSpec());
  const url = '/v1/things/anvil';
  await app.inject({ method: 'PUT', url, headers: json, payload: { name: 'Anvil' } });
  const got = await app.inject({ method: 'GET', url });
  t.match(got.headers['link'], /<\/docs>; rel="deprecation"/, "GET carries the deprecation's Link");
  const tag = String(got.headers['etag']);
  t.equal((await app.inject({ method: 'GET', url, headers: { 'if-none-match': tag } })).statusCode, 304);
  const put = await app.inject({
    method: 'PUT',
    url,
    headers: { ...json, 'if-match': tag },
    payload: { name: 'Anvil' },
  });
  t.equal(put.statusCode, 200, "PUT with GET's tag replaces");
  t.equal(put.headers['etag'], tag, 'and answers the tag GET answers for the same body');
  const changed = await app.inject({
    method: 'PUT',
    url,
    headers: { ...json, 'if-match': tag },
    payload: { name: 'B' },
  });
  t.equal(changed.statusCode, 200);
  t.equal((await app.inject({ method: 'DELETE', url, headers: { 'if-match': tag } })).statusCode, 412, 'a stale tag');
  const now = String((await app.inject({ method: 'GET', url })).headers['etag']);
  t.equal((await app.inject({ method: 'DELETE', url, headers: { 'if-match': now } })).statusCode, 204);
});

/** A request to each conditional operation of conditionalSpec: the thing `anvil`, a body where one is declared. */
function requestOf(method: string, path: string, hasBody: boolean) {
  return {
    method: method as 'GET',
    url: `/v1${path.replace(/\{[^}]+\}/, 'anvil')}`,
    ...(hasBody ? { headers: json, payload: { name: 'Changed' } } : {}),
  };
}

t.test(
  'a malformed If-Match or If-None-Match is a 400 on every conditional operation, and writes nothing',
  async (t) => {
    const spec = deprecatedThingsSpec();
    const app = await thingsApp(t, spec);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const url = '/v1/things/anvil';
    await app.inject({ method: 'PUT', url, headers: json, payload: { name: 'Anvil' } });
    const tag = (await app.inject({ method: 'GET', url })).headers['etag'];
    const operations = conditionalOperations(spec);
    t.same(operations.map((entry) => entry.operation.operationId).sort(), [
      'deleteThing',
      'getThing',
      'putThing',
      'sloppyPut',
    ]);
    for (const { method, path, operation } of operations) {
      const request = requestOf(method, path, operation.requestBody !== undefined);
      for (const header of ['if-match', 'if-none-match'])
        for (const field of malformedEntityTagFields) {
          const res = await app.inject({ ...request, headers: { ...request.headers, [header]: field } });
          t.equal(res.statusCode, 400, `${operation.operationId} ${header}: ${field}`);
          t.equal(res.json().code, 'invalid_request');
        }
      const body = operation.requestBody === undefined ? '' : JSON.stringify({ name: 'Changed' });
      for (const header of ['If-Match', 'If-None-Match']) {
        const head = [
          `${method} ${request.url} HTTP/1.1`,
          `${header}: *`,
          `${header}: "x"`,
          'Content-Type: application/json',
        ];
        t.equal(
          await rawRequest(port, head, body),
          400,
          `${operation.operationId}: ${header} * and a tag on two lines`,
        );
      }
    }
    t.equal((await app.inject({ method: 'GET', url })).headers['etag'], tag, 'nothing was written or deleted');
  },
);

t.test('openapi.yaml: every operation with an ETag refuses a malformed If-None-Match or If-Match', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded');
  const created = await app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: auth,
    payload: { name: 'Rex', categoryId: 3 },
  });
  const petId = String(created.json().id);
  const conditional = new Set(
    conditionalOperations(loadOpenApiDocument()).map(({ operation }) => operation.operationId),
  );
  const operations = loadContract().operations.filter((operation) => conditional.has(operation.operationId));
  t.ok(operations.length > 0, 'openapi.yaml has conditional operations');
  // Everything but the condition is valid (a body, every path parameter), so the 400 can only be the header's.
  const sample = (schema: JsonObject) => fc.sample(valid(schema), { numRuns: 1, seed: 1 })[0];
  for (const operation of operations) {
    const url = `/v1${operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const parameter = operation.parameters.find((entry) => entry.in === 'path' && entry.name === name);
      return name === 'petId' || parameter === undefined ? petId : encodeURIComponent(String(sample(parameter.schema)));
    })}`;
    const body = operation.body && { 'content-type': operation.body.mediaType, payload: sample(operation.body.schema) };
    for (const header of ['if-match', 'if-none-match'])
      for (const field of malformedEntityTagFields) {
        const res = await app.inject({
          method: operation.method.toUpperCase() as 'GET',
          url,
          headers: { ...auth, [header]: field, ...(body ? { 'content-type': body['content-type'] } : {}) },
          ...(body ? { payload: JSON.stringify(body.payload) } : {}),
        });
        t.equal(res.statusCode, 400, `${operation.operationId} ${header}: ${field}`);
        t.equal(res.json().code, 'invalid_request');
        t.match(res.json().message, new RegExp(header, 'i'), 'the answer names the header, not another part');
        t.type(res.headers['x-request-id'], 'string');
      }
  }
});
