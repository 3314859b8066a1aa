// The same contract written otherwise is no change for breaking and review: a component schema inlined where it is
// referenced, an inline schema moved to the components and referenced, keys and properties in another order, each a
// head of its own derived from one small spec. Naming a schema or no longer naming it is the one exception: code
// generated from the components (the first-party client exports each schema by its name) gains or loses that name,
// which both say at level none, and nothing else.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parse, stringify } from 'yaml';
import { parseContract, type LoadedContract } from '../../lib/contract/load.js';
import type { Json, JsonObject } from '../../lib/openapi/dereference.js';
import { runBreaking, type BreakingReport } from '../../scripts/contract/breaking.js';
import type { ClientChanges } from '../../scripts/contract/clientDeclarations.js';
import { compare, review, type Comparison } from '../../scripts/contract/review.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { scratchDir } from '../helpers/scratchSpace.js';

const dir = scratchDir('pets-equivalent-rewrites-');
t.teardown(() => {
  dir.remove();
});
const date = '2026-12-02';
const thingRef = { $ref: '#/components/schemas/Thing' };
const thing: JsonObject = {
  type: 'object',
  required: ['name', 'size'],
  additionalProperties: false,
  properties: { name: { type: 'string', maxLength: 20 }, size: { type: 'integer', minimum: 0, maximum: 10 } },
};
const things: JsonObject = { type: 'array', maxItems: 10, items: thingRef };
const json = (schema: Json) => ({ content: { 'application/json': { schema } } });

const base: JsonObject = {
  openapi: '3.1.0',
  info: { title: 'Things', version: '1.0.0' },
  servers: [{ url: 'http://localhost/v1' }],
  paths: {
    '/things': {
      get: {
        operationId: 'listThings',
        'x-slo': { availability: 99.9, latency: { thresholdSeconds: 0.25, percent: 99 } },
        responses: { '200': { description: 'OK', ...json(things) } },
      },
      post: {
        operationId: 'createThing',
        requestBody: { required: true, ...json(thingRef) },
        responses: {
          '201': {
            description: 'Created',
            ...json(thingRef),
            links: { getThing: { operationId: 'getThing', parameters: { id: '$response.body#/name' } } },
          },
          '400': { $ref: '#/components/responses/Refused' },
        },
      },
    },
    '/things/{id}': {
      get: {
        operationId: 'getThing',
        parameters: [{ $ref: '#/components/parameters/ThingId' }],
        responses: { '200': { description: 'OK', ...json(thingRef) } },
      },
    },
  },
  components: {
    schemas: { Thing: thing },
    parameters: { ThingId: { name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 20 } } },
    responses: { Refused: { description: 'Refused', ...json(thing) } },
  },
};

/** Every `$ref` to Thing replaced by Thing itself. */
const inlined = (document: JsonObject): JsonObject =>
  JSON.parse(JSON.stringify(document).replaceAll(JSON.stringify(thingRef), JSON.stringify(thing))) as JsonObject;

/** Every object's keys in the opposite order, arrays kept; `required` listed the other way round. */
function reordered(node: Json): Json {
  if (Array.isArray(node)) return node.map(reordered);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .reverse()
      .map(([key, value]) => [
        key,
        key === 'required' && Array.isArray(value) ? [...value].reverse() : reordered(value),
      ]),
  );
}

type Doc = any;
const rewrites: Record<string, (doc: Doc) => JsonObject> = {
  'a component schema inlined where it is referenced': (doc) => inlined(doc),
  'keys and properties in another order': (doc) => reordered(doc) as JsonObject,
};
const renamings: Record<string, { rewrite: (doc: Doc) => JsonObject; rule: string }> = {
  'a component schema inlined where it is referenced, and no longer named': {
    rewrite: (doc) => {
      const head = inlined(doc) as Doc;
      delete head.components.schemas.Thing;
      return head as JsonObject;
    },
    rule: 'component-schema-removed',
  },
  'an inline schema moved to the components and referenced': {
    rewrite: (doc) => {
      doc.components.schemas.Things = doc.paths['/things'].get.responses['200'].content['application/json'].schema;
      doc.paths['/things'].get.responses['200'].content['application/json'].schema = {
        $ref: '#/components/schemas/Things',
      };
      return doc as JsonObject;
    },
    rule: 'component-schema-added',
  },
};

let files = 0;
/** The document as a file of its own (int64 bounds written as the digits they are), and as review reads it. */
function written(document: unknown): LoadedContract & { file: string } {
  const text = stringify(document);
  const file = join(dir.path, `spec-${(files += 1)}.yaml`);
  writeFileSync(file, text);
  return { document: parseContract(text, file), text, source: file, file };
}
const baseFile = written(base);

function breakingOf(head: string, against = baseFile.file): { status: number; report: BreakingReport } {
  const out: string[] = [];
  const status = runBreaking(['--base', against, '--head', head, '--date', date, '--json'], {
    out: (text) => out.push(text),
    err: (text) => out.push(text),
  });
  return { status, report: JSON.parse(out.join('\n')) as BreakingReport };
}

/** What review says besides a named component: nothing of any operation, nothing shared, the gate passes. */
function nothingAtOperations(t: Test, comparison: Comparison) {
  t.same(comparison.operations, [], 'no operation changes');
  t.same(comparison.shared, [], 'no shared change');
  t.same(comparison.counts, { breaking: 0, warning: 0, additive: 0, none: comparison.other.length });
  t.match(comparison.gate, { passed: true, breaking: 0 });
}

const heads = Object.fromEntries(
  [
    ...Object.entries(rewrites),
    ...Object.entries(renamings).map(([name, { rewrite }]) => [name, rewrite] as const),
  ].map(([name, rewrite]) => [name, written(rewrite(structuredClone(base)))]),
);
// The first-party client's generator builds the pet store's client only: the declarations of a small spec are
// not made, and review's comparison is taken without them (review.test.ts does the same).
const noClientChange: ClientChanges = { refused: {}, added: [], removed: [], changed: [] };
const reviewOf = (name: string) => compare(baseFile, heads[name]!, date, noClientChange);

for (const name of Object.keys(rewrites))
  t.test(`${name}: no change at all`, async (t) => {
    const { status, report } = breakingOf(heads[name]!.file);
    t.equal(status, 0);
    t.same(report.changes, [], 'breaking: no change');
    const comparison = reviewOf(name);
    nothingAtOperations(t, comparison);
    t.same(comparison.other, [], 'review: nothing elsewhere');
    t.equal(comparison.version.needed, 'none', 'needs no release');
    t.match(comparison.changelog, 'No server or component changed.');
  });

for (const [name, { rule }] of Object.entries(renamings))
  t.test(`${name}: only the schema's name, at level none`, async (t) => {
    const { status, report } = breakingOf(heads[name]!.file);
    t.equal(status, 0);
    t.same(
      report.changes.map((change) => `${change.rule}:${change.level}`),
      [`${rule}:none`],
    );
    const comparison = reviewOf(name);
    nothingAtOperations(t, comparison);
    t.same(
      comparison.other.map((change) => change.rule),
      [rule],
    );
  });

t.test("today's openapi.yaml in another key order: no change, the client's declarations alike", async (t) => {
  const spec = () => parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8'), { intAsBigInt: true }) as Json;
  const main = written(spec());
  const head = written(reordered(spec()));
  const { status, report } = breakingOf(head.file, main.file);
  t.equal(status, 0);
  t.same(report.changes, [], 'breaking: no change');
  const [comparison] = (await review([main], head, date)).comparisons;
  nothingAtOperations(t, comparison!);
  t.same(comparison!.other, [], 'review: nothing elsewhere');
  t.same(comparison!.client, noClientChange, "the client's declarations alike");
  t.equal(comparison!.version.needed, 'none');
});
