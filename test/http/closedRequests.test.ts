import t from 'tap';
import { loadContract } from '../../lib/conformance/spec.js';
import { startTestApp } from '../helpers/app.js';

const { operations } = loadContract();

// Requests are closed: an operation that declares no requestBody takes no content. Before, a JSON body on one
// was ignored and answered as if absent, and any other type was a 415 the operation does not declare.
t.test('content sent to an operation that declares no body is a 400 invalid_request, whatever its type', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded');
  const bodyless = operations.filter((operation) => operation.body === undefined);
  t.ok(bodyless.length > 0, 'the spec has operations without a body');
  for (const operation of bodyless) {
    const url = `/v1${operation.path.replace(/\{[^}]+\}/g, '1')}`;
    for (const [contentType, payload] of [
      ['application/json', '{}'],
      ['text/plain', 'x'],
    ] as const) {
      const res = await app.inject({
        method: operation.method.toUpperCase() as 'GET',
        url,
        payload,
        headers: { ...auth, 'content-type': contentType },
      });
      t.equal(res.statusCode, 400, `${operation.operationId} with ${contentType} content: 400`);
      t.equal((res.json() as { code?: string }).code, 'invalid_request', `${operation.operationId}: invalid_request`);
    }
    const bare = await app.inject({ method: operation.method.toUpperCase() as 'GET', url, headers: auth });
    t.notMatch(bare.body, /takes no request body/, `${operation.operationId} without content is not refused for it`);
  }
  const unauthenticated = await app.inject({
    method: 'GET',
    url: '/v1/pets',
    payload: '{}',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(unauthenticated.statusCode, 401, 'the key is checked first');
});
