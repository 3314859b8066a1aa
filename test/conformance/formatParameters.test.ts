import fc from 'fast-check';
import t from 'tap';
import { meetsFormat } from '../../lib/conformance/arbitraries.js';
import { invalidCases, textMightBeValid } from '../../lib/conformance/requests.js';
import type { DeclaredResponse, Operation } from '../../lib/conformance/spec.js';

// A path or query parameter whose only rule past its length is a format (an export's uuid): text that breaks
// the format is a violation. Judged valid by length alone, every format breaker was thrown away and drawing an
// invalid request for the operation never ended (the conformance suite hung on GET /exports/{exportId}).
const uuid = { type: 'string', format: 'uuid', maxLength: 36 };

t.test('text breaking a parameter format is no valid value of it', async (t) => {
  t.notOk(textMightBeValid(uuid, '0'), 'a short text that is no uuid');
  t.notOk(textMightBeValid(uuid, 'g23e4567-e89b-12d3-a456-426614174000'), 'a uuid-long text that is no uuid');
  t.ok(textMightBeValid(uuid, '123e4567-e89b-12d3-a456-426614174000'), 'a uuid');
  t.ok(textMightBeValid({ type: 'string', maxLength: 36 }, '0'), 'without a format, any text in bounds');
});

t.test('invalid requests to an operation with a uuid path parameter are drawn, each breaking it', async (t) => {
  const operation: Operation = {
    operationId: 'getExport',
    method: 'GET',
    path: '/exports/{exportId}',
    parameters: [{ name: 'exportId', in: 'path', required: true, schema: uuid }],
    responses: new Map(['200', '400', '404'].map((status) => [status, {} as DeclaredResponse])),
    secured: true,
    scopes: [],
  };
  const cases = fc.sample(invalidCases(operation, { key: 'pets_key', bodyLimit: 65536 }), { numRuns: 200, seed: 1 });
  const broken = cases
    .map((drawn) => drawn.request.pathParams?.['exportId'])
    .filter((text): text is string => text !== undefined && !meetsFormat(uuid, text));
  t.ok(broken.length > 0, 'some cases send an id that is no uuid');
});
