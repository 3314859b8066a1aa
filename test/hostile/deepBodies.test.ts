import fc from 'fast-check';
import t from 'tap';
import { apiBasePath, listOperations, loadOpenApiDocument } from '../../src/openapi/document.js';
import { maxJsonDepth } from '../../src/http/operations/jsonDepth.js';
import { startTestApp } from '../helpers/app.js';

// Every operation of the spec that takes a body, its path parameters filled with a value of any kind.
const bodyOperations = listOperations(loadOpenApiDocument())
  .filter(({ operation }) => operation.requestBody !== undefined)
  .map(({ method, path, operation }) => ({
    method: method as 'POST' | 'PUT' | 'PATCH',
    url: apiBasePath() + path.replace(/\{[^}]+\}/g, '1'),
    operationId: operation.operationId,
  }));

type Shape = 'array' | 'object' | 'mixed';

/** JSON text nested `depth` deep around `inner`, built without recursion (the depth reaches a million). */
function nested(depth: number, shape: Shape, inner: string): string {
  const opener = (level: number) => (shape === 'array' || (shape === 'mixed' && level % 2 === 1) ? '[' : '{"a":');
  const closer = (level: number) => (shape === 'array' || (shape === 'mixed' && level % 2 === 1) ? ']' : '}');
  const opens: string[] = [];
  const closes: string[] = [];
  for (let level = 0; level < depth; level += 1) {
    opens.push(opener(level));
    closes.push(closer(depth - 1 - level));
  }
  return opens.join('') + inner + closes.join('');
}

t.test('bodies nested up to a megabyte deep, lone surrogates or not, are a 4xx on every operation', async (t) => {
  t.ok(bodyOperations.length > 0, 'the spec has operations that take a body');
  const { app, auth } = await startTestApp(t, 'embedded');
  let deepest = 0;
  const sample = fc.record({
    operation: fc.constantFrom(...bodyOperations),
    // Shallow, deep within the body limit (a 400 to give), and deep past it (a 413).
    depth: fc.oneof(
      fc.integer({ min: 1, max: 2 * maxJsonDepth }),
      fc.integer({ min: 1, max: 1 << 15 }),
      fc.integer({ min: 1, max: 1 << 20 }),
    ),
    shape: fc.constantFrom<Shape>('array', 'object', 'mixed'),
    inner: fc.constantFrom('"\\ud800"', '"\\udfff"', '"Rex"', '1', 'null', '{"name":"\\ud800x"}'),
  });
  type Case = [typeof sample extends fc.Arbitrary<infer Sample> ? Sample : never];
  const examples: Case[] = [4000, 10_000, maxJsonDepth, maxJsonDepth + 1, 1 << 20].flatMap((depth) =>
    bodyOperations.flatMap((operation) =>
      (['array', 'object'] as const).map((shape): Case => [{ operation, depth, shape, inner: '"\\ud800"' }]),
    ),
  );
  await fc.assert(
    fc.asyncProperty(sample, async ({ operation, depth, shape, inner }) => {
      deepest = Math.max(deepest, depth);
      const response = await app.inject({
        method: operation.method,
        url: operation.url,
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': `deep-${depth}-${shape}` },
        payload: nested(depth, shape, inner),
      });
      const body = response.json<Record<string, unknown>>();
      const where = `${operation.operationId}, ${shape} ${depth} deep around ${inner}`;
      if (response.statusCode < 400 || response.statusCode >= 500) throw new Error(`${where}: ${response.statusCode}`);
      t.same(Object.keys(body).sort(), ['code', 'message', 'status'], where);
    }),
    { numRuns: 60, examples },
  );
  t.comment(`deepest body tried: ${deepest}`);
  t.ok(deepest >= 1 << 20, 'a body a megabyte deep was tried');
});

t.test('past the documented depth the answer names it; at it, the body is judged by its schema', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded');
  for (const operation of bodyOperations) {
    const send = (depth: number) =>
      app.inject({
        method: operation.method,
        url: operation.url,
        headers: { ...auth, 'content-type': 'application/json' },
        payload: nested(depth, 'array', '"\\ud800"'),
      });
    const past = await send(maxJsonDepth + 1);
    t.equal(past.statusCode, 400, `${operation.operationId} past the depth`);
    t.match(past.json(), { code: 'invalid_request', message: new RegExp(`more than ${maxJsonDepth} deep`) });
    const at = await send(maxJsonDepth);
    t.equal(at.statusCode, 400, `${operation.operationId} at the depth`);
    t.notMatch(at.json(), { message: /deep/ }, 'at the depth, another reason');
    const bracketsInAString = await app.inject({
      method: operation.method,
      url: operation.url,
      headers: { ...auth, 'content-type': 'application/json' },
      payload: `{"name":"\\"${'['.repeat(2 * maxJsonDepth)}","x":1}`,
    });
    t.notMatch(bracketsInAString.json(), { message: /deep/ }, 'brackets inside a string do not nest');
  }
});
