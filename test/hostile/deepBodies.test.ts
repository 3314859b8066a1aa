import fc from 'fast-check';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { listOperations, loadOpenApiDocument, type OpenApiDocument } from '../../src/openapi/document.js';
import { basePathOf } from '../../src/openapi/basePath.js';
import { mediaTypeEntryOf } from '../../src/openapi/mediaTypes.js';
import { maxJsonDepth } from '../../src/http/operations/jsonDepth.js';
import { startTestApp } from '../helpers/app.js';
import { startSpecApp } from '../helpers/specApp.js';

/** A body to nest: an operation's URL (path parameters filled with a value of any kind) and a media type of its body. */
interface DeepBodyTarget {
  method: 'POST' | 'PUT' | 'PATCH';
  url: string;
  operationId: string;
  contentType: string;
}

/**
 * Where a spec lets a body nest: each media type an operation's body declares that the strict JSON parser reads
 * (its entry in src/openapi/mediaTypes.ts: application/json and every +json, merge-patch among them), sent
 * as that type. A body of another media type has no depth to probe (bytes are stored as sent, never
 * parsed): it is listed in `skipped`, with why.
 */
function deepBodyTargets(spec: OpenApiDocument): { targets: DeepBodyTarget[]; skipped: string[] } {
  const targets: DeepBodyTarget[] = [];
  const skipped: string[] = [];
  for (const { method, path, operation } of listOperations(spec)) {
    for (const contentType of Object.keys(operation.requestBody?.content ?? {})) {
      const parse = mediaTypeEntryOf(contentType)?.parse;
      if (parse === 'strict-json') {
        const url = basePathOf(spec) + path.replace(/\{[^}]+\}/g, '1');
        targets.push({
          method: method as DeepBodyTarget['method'],
          url,
          operationId: operation.operationId,
          contentType,
        });
      } else
        skipped.push(
          `${operation.operationId} in ${contentType}: read ${parse === undefined ? 'by no parser' : `as ${parse}`}, not parsed as JSON, so it has no depth`,
        );
    }
  }
  return { targets, skipped };
}

const { targets: bodyOperations, skipped } = deepBodyTargets(loadOpenApiDocument());

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
  t.ok(bodyOperations.length > 0, 'the spec has operations that take a JSON body');
  for (const line of skipped) t.comment(`not probed: ${line}`);
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
        headers: { ...auth, 'content-type': operation.contentType, 'idempotency-key': `deep-${depth}-${shape}` },
        payload: nested(depth, shape, inner),
      });
      const body = response.json<Record<string, unknown>>();
      const where = `${operation.operationId} in ${operation.contentType}, ${shape} ${depth} deep around ${inner}`;
      if (response.statusCode < 400 || response.statusCode >= 500) throw new Error(`${where}: ${response.statusCode}`);
      t.same(Object.keys(body).sort(), ['code', 'message', 'status'], where);
    }),
    { numRuns: 60, examples },
  );
  t.comment(`deepest body tried: ${deepest}`);
  t.ok(deepest >= 1 << 20, 'a body a megabyte deep was tried');
});

type Inject = (request: {
  method: DeepBodyTarget['method'];
  url: string;
  headers: Record<string, string>;
  payload: string;
}) => Promise<{ statusCode: number; json: () => unknown }>;

/** Past the documented depth each target's answer names it; at it, the body is judged by its schema. */
async function probeDepthLimit(t: Test, inject: Inject, targets: DeepBodyTarget[], auth: Record<string, string>) {
  for (const operation of targets) {
    const where = `${operation.operationId} in ${operation.contentType}`;
    const send = (payload: string) =>
      inject({
        method: operation.method,
        url: operation.url,
        headers: { ...auth, 'content-type': operation.contentType },
        payload,
      });
    const past = await send(nested(maxJsonDepth + 1, 'array', '"\\ud800"'));
    t.equal(past.statusCode, 400, `${where} past the depth`);
    t.match(past.json(), { code: 'invalid_request', message: new RegExp(`more than ${maxJsonDepth} deep`) });
    const at = await send(nested(maxJsonDepth, 'array', '"\\ud800"'));
    t.equal(at.statusCode, 400, `${where} at the depth`);
    t.notMatch(at.json(), { message: /deep/ }, 'at the depth, another reason');
    const bracketsInAString = await send(`{"name":"\\"${'['.repeat(2 * maxJsonDepth)}","x":1}`);
    t.notMatch(bracketsInAString.json(), { message: /deep/ }, 'brackets inside a string do not nest');
  }
}

t.test('past the documented depth the answer names it; at it, the body is judged by its schema', async (t) => {
  const { app, auth } = await startTestApp(t, 'embedded');
  await probeDepthLimit(t, (request) => app.inject(request), bodyOperations, auth);
});

// A spec of this test's own: a care changed by a JSON Merge Patch, a photo put in bytes, a note in JSON.
const careAndPhoto = parse(`
openapi: 3.1.0
info: { title: Care and photo, version: 1.0.0 }
servers: [{ url: 'http://localhost/v1' }]
paths:
  /pets/{petId}/care:
    patch:
      operationId: updateCare
      parameters: [{ name: petId, in: path, required: true, schema: { type: integer } }]
      requestBody:
        required: true
        content:
          application/merge-patch+json: { schema: { type: object, additionalProperties: false, properties: { diet: { type: string } } } }
      responses:
        '200': { description: Changed }
        '400': { $ref: '#/components/responses/Error' }
        '415': { $ref: '#/components/responses/Error' }
  /pets/{petId}/photo:
    put:
      operationId: putPhoto
      parameters: [{ name: petId, in: path, required: true, schema: { type: integer } }]
      requestBody:
        required: true
        content: { image/png: { schema: { type: string, contentMediaType: image/png } } }
      responses:
        '204': { description: Stored }
        '400': { $ref: '#/components/responses/Error' }
        '415': { $ref: '#/components/responses/Error' }
components:
  securitySchemes: {}
  schemas:
    Error:
      type: object
      additionalProperties: false
      required: [code, message, status]
      properties:
        code: { type: string }
        message: { type: string }
        status: { type: integer }
  responses:
    Error:
      description: An error
      content: { application/json: { schema: { $ref: '#/components/schemas/Error' } } }
`) as OpenApiDocument;

t.test(
  'each body is probed in its own media type: a merge patch nests as JSON, bytes are skipped, saying why',
  async (t) => {
    const { targets, skipped } = deepBodyTargets(careAndPhoto);
    t.same(
      targets.map(({ operationId, contentType }) => `${operationId} ${contentType}`),
      ['updateCare application/merge-patch+json'],
      'the merge patch is probed, as merge-patch+json',
    );
    t.same(skipped, ['putPhoto in image/png: read as bytes, not parsed as JSON, so it has no depth']);
    const stored = async () => ({ status: 204 });
    const app = await startSpecApp(t, careAndPhoto, { updateCare: stored, putPhoto: stored });
    await probeDepthLimit(t, (request) => app.inject(request), targets, {});
  },
);
