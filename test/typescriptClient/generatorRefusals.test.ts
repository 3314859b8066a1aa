import t from 'tap';
import { clientOperations } from '../../generators/clientOperations.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';

// The client generator sends every parameter an operation declares, or refuses the spec naming the one it
// cannot send: never a method that silently drops a part of the request.

const withParameters = (parameters: unknown[]): JsonObject =>
  ({
    openapi: '3.1.0',
    paths: {
      '/things/{thingId}': {
        put: {
          operationId: 'putThing',
          parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'string' } }, ...parameters],
          responses: { '200': { description: 'ok' }, '304': { description: 'not modified' } },
        },
      },
    },
  }) as JsonObject;

t.test('optional headers are options named in camelCase; a 304 is noted', async (t) => {
  const [operation] = clientOperations(
    withParameters([
      { name: 'If-Match', in: 'header', schema: { type: 'string' } },
      { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
      { name: 'X-Dry-Run', in: 'header', schema: { type: 'boolean' } },
      { name: 'Prefer', in: 'header', schema: { enum: ['return=minimal', 'return=representation'] } },
      { name: 'Idempotency-Key', in: 'header', schema: { type: 'string' } },
    ]),
  );
  t.same(operation?.optionalHeaders, [
    { header: 'If-Match', option: 'ifMatch' },
    { header: 'If-None-Match', option: 'ifNoneMatch' },
    { header: 'X-Dry-Run', option: 'xDryRun' },
    { header: 'Prefer', option: 'prefer' },
  ]);
  t.equal(operation?.idempotencyKey, true);
  t.equal(operation?.notModified, true);
});

t.test('a parameter the client cannot send is a generation error naming it', async (t) => {
  for (const [parameter, message] of [
    [{ name: 'session', in: 'cookie', schema: { type: 'string' } }, /putThing: optional cookie session/],
    [{ name: 'session', in: 'cookie', required: true, schema: { type: 'string' } }, /required cookie session/],
    [
      { name: 'X-Tags', in: 'header', schema: { type: 'array', items: { type: 'string' } } },
      /optional header X-Tags: not one scalar/,
    ],
    [
      { name: 'X-Filter', in: 'header', content: { 'application/json': { schema: { type: 'object' } } } },
      /header X-Filter: not one scalar/,
    ],
    [{ name: 'X-Any', in: 'header' }, /optional header X-Any: not one scalar/],
    [
      { name: 'Signal', in: 'header', schema: { type: 'string' } },
      /header parameter Signal would be the option signal/,
    ],
    [{ name: 'X_Odd', in: 'header', schema: { type: 'string' } }, /optional header X_Odd/],
  ] as const) {
    t.throws(() => clientOperations(withParameters([parameter])), { message }, parameter.name);
  }
  t.throws(
    () =>
      clientOperations(
        withParameters([
          { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
          { name: 'x-trace', in: 'header', schema: { type: 'string' } },
        ]),
      ),
    { message: /two header parameters would be the option xTrace/ },
  );
});
