import fc from 'fast-check';
import t from 'tap';
import { invalidCases } from '../../lib/conformance/requests.js';
import type { DeclaredResponse, Operation } from '../../lib/conformance/spec.js';

// An operation that declares no body (an action, POST /pets/{petId}/sale; a job, POST /exports) has its
// invalid requests too: content it does not declare is a 400. Without that case the suite sent no request a
// bodyless POST without parameters refuses, and its declared 400 was never produced.
const operation = (method: string): Operation => ({
  operationId: 'startExport',
  method,
  path: '/exports',
  parameters: [],
  responses: new Map(['202', '400', '401'].map((status) => [status, {} as DeclaredResponse])),
  secured: true,
  scopes: [],
});
const drawn = (method: string) =>
  fc.sample(invalidCases(operation(method), { key: 'pets_key', bodyLimit: 65536 }), { numRuns: 200, seed: 3 });

t.test('a request with content to an operation declaring no body is an invalid case, expecting 400', async (t) => {
  const withContent = drawn('POST').filter(
    ({ request }) => request.body !== undefined && /^bearer +pets_key$/i.test(request.headers['authorization'] ?? ''),
  );
  t.ok(withContent.length > 0, 'drawn with a valid key');
  t.ok(
    withContent.every(({ expect }) => expect.length === 1 && expect[0] === 400),
    'each expects 400',
  );
  t.ok(
    drawn('GET').every(({ request }) => request.body === undefined),
    'never on a GET, whose content fetch does not send',
  );
});
