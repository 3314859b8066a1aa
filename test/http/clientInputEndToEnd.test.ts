import t, { type Test } from 'tap';
import type { AddressInfo } from 'node:net';
import { exampleSpec } from '../../lib/constructs/examples.js';
import type { OpenApiDocument } from '../../src/openapi/document.js';
import { startSpecApp } from '../helpers/specApp.js';

// What a client sends, carried through a real route on a real socket (the unit tests of
// test/http/headerValues.test.ts and test/http/pathMatchingOrder.test.ts check the steps alone): a CR or
// LF a handler copies from the query into a header, and a path escaped so that the router and the path
// order would read it differently.

const text = { type: 'string', maxLength: 100 };
const spec = exampleSpec({
  paths: {
    '/things': {
      post: {
        operationId: 'makeThing',
        parameters: [{ name: 'next', in: 'query', required: true, schema: text }],
        responses: { '201': { description: 'Created', headers: { Location: { schema: text } } } },
      },
    },
    '/things/exports': { post: { operationId: 'exportThings', responses: { '200': { description: 'OK' } } } },
    '/things/{name}': {
      put: {
        operationId: 'putThing',
        parameters: [{ name: 'name', in: 'path', required: true, schema: text }],
        responses: { '204': { description: 'Stored' } },
      },
    },
  },
}) as unknown as OpenApiDocument;

async function started(t: Test) {
  const calls: string[] = [];
  const app = await startSpecApp(t, spec, {
    makeThing: (input: { query: { next: string } }) => {
      calls.push('makeThing');
      return Promise.resolve({ status: 201, headers: { Location: `/v1/things/${input.query.next}` } });
    },
    exportThings: () => {
      calls.push('exportThings');
      return Promise.resolve({ status: 200 });
    },
    putThing: (input: { params: { name: string } }) => {
      calls.push(`putThing ${input.params.name}`);
      return Promise.resolve({ status: 204 });
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { calls, base: `http://127.0.0.1:${port}` };
}

t.test('a CR/LF the client put in a header the handler builds is the Error object, never a header', async (t) => {
  const { calls, base } = await started(t);
  const answer = await fetch(`${base}/v1/things?next=a%0D%0ASet-Cookie:%20x=1`, { method: 'POST' });
  t.equal(answer.status, 500);
  t.match(answer.headers.get('content-type'), /^application\/json/);
  t.ok(answer.headers.get('x-request-id'), 'with the request id');
  t.equal(answer.headers.get('set-cookie'), null, 'no header the client wrote');
  const body = (await answer.json()) as { code: string; status: number; message: string };
  t.match(body, { code: 'internal', status: 500 });
  t.notMatch(body.message, /Set-Cookie/, "the client's text stays out of the message");
  t.same(calls, ['makeThing']);

  const fine = await fetch(`${base}/v1/things?next=a`, { method: 'POST' });
  t.equal(fine.status, 201, 'a plain value passes');
  t.equal(fine.headers.get('location'), '/v1/things/a');
});

t.test('an escaped path is the path the router serves: %65xports is exports, on the wire', async (t) => {
  const { calls, base } = await started(t);
  for (const path of ['/v1/things/%65xports', '/v1/things/export%73', '/v1/things/%65%78ports']) {
    const answer = await fetch(`${base}${path}`, { method: 'PUT' });
    t.equal(answer.status, 405, `PUT ${path} is PUT /v1/things/exports`);
    t.equal(answer.headers.get('allow'), 'POST');
    t.match(await answer.json(), { code: 'method_not_allowed', status: 405 });
  }
  t.same(calls, [], 'putThing never made a thing named exports');
  const other = await fetch(`${base}/v1/things/%45xports`, { method: 'PUT' });
  t.equal(other.status, 204, '%45 is E: another name');
  t.same(calls, ['putThing Exports']);
});
