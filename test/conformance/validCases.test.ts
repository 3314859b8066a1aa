import fc from 'fast-check';
import t from 'tap';
import { validCases } from '../../lib/conformance/requests.js';
import type { DeclaredResponse, Operation } from '../../lib/conformance/spec.js';

// What a schema-valid request may be answered, by what the operation declares: a 422 declared on an operation
// with a body is content the schema admits but the server cannot act on (a pet id in the body naming no pet),
// as a 404 is for a path naming nothing; the stateless check must not call it a wrong answer.
t.test('a valid request with a body may get the 422 its operation declares, and only then', async (t) => {
  const operation = (statuses: string[], withBody: boolean): Operation => ({
    operationId: 'createVisit',
    method: 'POST',
    path: '/visits',
    parameters: [],
    ...(withBody
      ? {
          body: {
            required: true,
            mediaType: 'application/json',
            kind: 'json',
            schema: {
              type: 'object',
              additionalProperties: false,
              required: ['petId'],
              properties: { petId: { type: 'integer', minimum: 1, maximum: 100 } },
            },
          },
        }
      : {}),
    responses: new Map(statuses.map((status) => [status, {} as DeclaredResponse])),
    secured: true,
    scopes: [],
  });
  const expected = (op: Operation) =>
    fc.sample(validCases(op, { key: 'pets_key', bodyLimit: 65536 }), { numRuns: 1, seed: 1 })[0]!.expect;
  t.same(expected(operation(['201', '400', '422'], true)), [201, 422], 'declared, with a body');
  t.same(expected(operation(['201', '400'], true)), [201], 'not declared');
  t.same(expected(operation(['200', '422'], false)), [200], 'no body');
});
