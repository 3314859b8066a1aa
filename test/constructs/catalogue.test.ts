import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { stringify } from 'yaml';
import { catalogue } from '../../lib/constructs/catalogue.js';
import { exampleSpec } from '../../lib/constructs/examples.js';
import { isRefused, machineIds, machines } from '../../lib/constructs/machines.js';
import { constructMatrix } from '../../lib/constructs/matrix.js';
import {
  assertSupportedBy,
  ConstructRefusedError,
  constructsIn,
  matrixAnchor,
  refusalReport,
  refusals,
} from '../../lib/constructs/refusals.js';
import { schemas, sharedWalks } from '../../lib/constructs/walk.js';
import { dereference, type JsonObject } from '../../lib/openapi/dereference.js';
import { repoRoot } from '../../lib/repoRoot.js';

const run = promisify(execFile);

t.test(
  'every construct has one id and a verdict from every machine; a supported one names a test that names it',
  async (t) => {
    const ids = catalogue.map((construct) => construct.id);
    t.same([...new Set(ids)], ids, 'ids are unique');
    for (const construct of catalogue)
      for (const machine of machineIds) {
        const verdict = construct.verdicts[machine];
        t.ok(verdict, `${construct.id}: a verdict from the ${machines[machine]}`);
        if (isRefused(verdict)) {
          t.ok(verdict.refused.length > 10, `${construct.id}: the ${machines[machine]} says why it refuses`);
          continue;
        }
        const file = join(repoRoot, verdict.supported);
        t.ok(existsSync(file), `${construct.id}: ${verdict.supported} exists`);
        if (existsSync(file))
          t.ok(readFileSync(file, 'utf8').includes(`'${construct.id}'`), `${verdict.supported} names ${construct.id}`);
      }
  },
);

t.test("each construct's detector finds it in its own example, and only there", async (t) => {
  for (const construct of catalogue) {
    const raw = exampleSpec(construct.example);
    const found = construct.detect({ raw, document: dereference(raw) });
    t.ok(found.length > 0, `${construct.id} is found in its example`);
    for (const pointer of found) t.match(pointer, /^\/[^#]/, `${construct.id}: a JSON pointer, ${pointer}`);
  }
  t.same(
    constructsIn(exampleSpec({})).map(({ construct }) => construct.id),
    ['servers-root'],
    'the base of the examples holds no construct but its server',
  );
});

t.test('a detection walks each document once, and the next detection sees an edit made between the two', async (t) => {
  const document = exampleSpec(catalogue.find(({ id }) => id === 'schema-any-of')!.example);
  sharedWalks(() => t.equal(schemas(document), schemas(document), 'within a detection, one walk of the schemas'));
  t.not(schemas(document), schemas(document), 'outside one, each call walks');
  const anyOf = (raw: JsonObject) =>
    constructsIn(raw)
      .filter(({ construct }) => construct.id === 'schema-any-of')
      .flatMap(({ at }) => at);
  const before = anyOf(document);
  t.ok(before.length > 0, 'the example uses anyOf');
  const schemasOf = (document['components'] as JsonObject)['schemas'] as JsonObject;
  schemasOf['Added'] = { anyOf: [{ type: 'string' }, { type: 'integer' }] };
  t.same(anyOf(document), [...before, '/components/schemas/Added/anyOf'], 'the edit is seen');
});

t.test('a refused construct is refused on its example: its id, where, by whom, and its row', async (t) => {
  for (const construct of catalogue.filter((entry) => machineIds.some((m) => isRefused(entry.verdicts[m])))) {
    const raw = exampleSpec(construct.example);
    const refusal = refusals(raw).find((found) => found.id === construct.id);
    if (!refusal) {
      t.fail(`${construct.id} is not refused on its example`);
      continue;
    }
    t.same(refusal.at, construct.detect({ raw, document: dereference(raw) }), `${construct.id}: where it appears`);
    t.same(
      refusal.refusedBy.map(({ machine }) => machine),
      machineIds.filter((machine) => isRefused(construct.verdicts[machine])),
      `${construct.id}: the machines that refuse it`,
    );
    const report = refusalReport('spec.yaml', [refusal]);
    t.match(report, `- ${construct.id} at #${refusal.at[0]}`);
    t.match(report, matrixAnchor(construct.id));
  }
});

t.test('a supported construct is refused by no machine', async (t) => {
  for (const construct of catalogue.filter((entry) => machineIds.every((m) => !isRefused(entry.verdicts[m]))))
    t.same(refusals(exampleSpec(construct.example)), [], construct.id);
});

t.test('a media range (image/*) is no bytes type the service serves: refused as media-other', async (t) => {
  const content = (type: string) => ({
    paths: {
      '/things': {
        put: {
          operationId: 'example',
          requestBody: { content: { [type]: {} } },
          responses: { '200': { description: 'OK' } },
        },
      },
    },
  });
  t.same(
    refusals(exampleSpec(content('image/*'))).map((found) => found.id),
    ['media-other'],
  );
  t.same(refusals(exampleSpec(content('image/webp'))), [], 'a concrete image type is bytes');
});

t.test('a tool asked to read a spec it refuses throws the construct, never something deeper', async (t) => {
  const raw = exampleSpec(catalogue.find((construct) => construct.id === 'media-text')!.example);
  const error = (() => {
    try {
      assertSupportedBy('conformance', raw);
    } catch (thrown) {
      return thrown;
    }
    return undefined;
  })();
  t.ok(error instanceof ConstructRefusedError, 'a ConstructRefusedError');
  t.match((error as Error).message, '- media-text at #/paths/~1things/post/requestBody/content/text~1plain');
  t.doesNotThrow(() => {
    assertSupportedBy('conformance', exampleSpec({}));
  });
});

t.test('the matrix has one row per construct, anchored by its id', async (t) => {
  const matrix = constructMatrix();
  for (const construct of catalogue) t.match(matrix, `<a id="${construct.id}"></a>`);
  t.equal(matrix.split('\n').length, catalogue.length + 2);
});

t.test('npm run generate stops on a refused construct, before writing anything', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'constructs-'));
  const generate = (spec: object) => {
    const file = join(folder, 'spec.yaml');
    writeFileSync(file, stringify(spec));
    return run('npx', ['--no-install', 'tsx', 'generators/constructs.ts', file, join(folder, 'out')], {
      cwd: repoRoot,
    });
  };
  const refusedExample = catalogue.find((construct) => construct.id === 'param-cookie')!.example;
  const failure = await generate(exampleSpec(refusedExample)).then(
    () => undefined,
    (error: unknown) => error as { code: number; stderr: string },
  );
  t.equal(failure?.code, 1, 'exits 1');
  t.match(failure?.stderr, '- param-cookie at #/paths/~1things/get/parameters/0');
  t.match(failure?.stderr, 'refused by HTTP layer');
  t.match(failure?.stderr, 'read docs/constructs.md#param-cookie');
  t.notOk(existsSync(join(folder, 'out')), 'nothing written');
  await generate(exampleSpec(catalogue.find((construct) => construct.id === 'media-json')!.example));
  t.same(readdirSync(join(folder, 'out', 'docs')), ['constructs.md'], 'a spec it accepts gets the matrix');
});
