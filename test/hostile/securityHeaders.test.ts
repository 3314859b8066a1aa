import t from 'tap';
import { loadOpenApiDocument } from '../../src/openapi/document.js';
import { rawRequest, startHostileApp } from './harness.js';

t.test('nosniff on every response, no-store on every API response', async (t) => {
  const h = await startHostileApp(t);
  const auth = { Authorization: `Bearer ${h.key}` };
  const json = { ...auth, 'Content-Type': 'application/json' };
  const api = {
    'listPets 200': rawRequest('GET /v1/pets HTTP/1.1', auth),
    'createPet 201': rawRequest('POST /v1/pets HTTP/1.1', json, '{"name":"Rex","categoryId":1}'),
    'getPet 404': rawRequest('GET /v1/pets/42 HTTP/1.1', auth),
    'createPet 400': rawRequest('POST /v1/pets HTTP/1.1', json, '{}'),
    'listPets 401': rawRequest('GET /v1/pets HTTP/1.1'),
    'createPet 415': rawRequest('POST /v1/pets HTTP/1.1', { ...auth, 'Content-Type': 'text/plain' }, 'x'),
  };
  for (const [label, request] of Object.entries(api)) {
    const response = await h.send(request);
    t.equal(String(response.status), label.split(' ')[1], label);
    t.equal(response.headers['x-content-type-options'], 'nosniff', `${label}: nosniff`);
    t.equal(response.headers['cache-control'], 'no-store', `${label}: no-store`);
  }
  const other = {
    'unknown route 404': rawRequest('GET /nowhere HTTP/1.1'),
    'healthz 200': rawRequest('GET /healthz HTTP/1.1'),
    'parser error 400': 'NOT HTTP\r\n\r\n',
    'bad URL 400': rawRequest('GET /v1/pets/%zz HTTP/1.1', auth),
  };
  for (const [label, request] of Object.entries(other)) {
    const response = await h.send(request);
    t.equal(String(response.status), label.split(' ').pop(), label);
    t.equal(response.headers['x-content-type-options'], 'nosniff', `${label}: nosniff`);
  }
});

t.test('openapi.yaml declares both headers on every response of the API', async (t) => {
  const spec = loadOpenApiDocument() as unknown as {
    paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; headers?: object }> }>>;
    components: { responses: Record<string, { headers?: object }> };
  };
  for (const [path, operations] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const resolved = response.$ref ? spec.components.responses[response.$ref.split('/').pop() ?? ''] : response;
        const headers = Object.keys(resolved?.headers ?? {});
        t.ok(headers.includes('X-Content-Type-Options'), `${method} ${path} ${status}: X-Content-Type-Options`);
        t.ok(headers.includes('Cache-Control'), `${method} ${path} ${status}: Cache-Control`);
      }
    }
  }
});
