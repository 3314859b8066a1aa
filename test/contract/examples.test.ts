import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { loadContract } from '../../lib/conformance/spec.js';
import { writeSpecmaticSpec } from '../../scripts/contract/specmaticSpec.js';
import { specWithUnsafeOperations } from '../conformance/unsafeFixture.js';

/**
 * Generators send a declared example as it is, run after run, with whatever
 * body they generate. A header whose value must differ for each intended
 * request (Idempotency-Key: the same key with another body is a 422) must
 * therefore declare no example anywhere a tool reads one (issue 28).
 */
const uniquePerRequest = ['Idempotency-Key'];

t.test('a header that must be new for every request declares no sendable example', async (t) => {
  const { operations } = loadContract();
  let checked = 0;
  for (const operation of operations) {
    for (const parameter of operation.parameters) {
      if (!uniquePerRequest.includes(parameter.name)) continue;
      checked += 1;
      const declared = parameter as unknown as Record<string, unknown>;
      for (const [where, holder] of [
        ['parameter', declared],
        ['schema', parameter.schema],
      ] as const)
        for (const keyword of ['example', 'examples', 'default', 'const', 'enum'])
          t.notOk(keyword in holder, `${operation.operationId} ${parameter.name}: no ${keyword} on the ${where}`);
    }
  }
  t.ok(checked > 0, `${checked} such parameters checked`);
});

t.test("Specmatic's copy of the spec leaves out every unsafe operation on a resource, and says why", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'specmatic-spec-'));
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  t.same(writeSpecmaticSpec(join(dir, 'here')), [], "this checkout's spec: nothing left out");
  t.same(
    readdirSync(join(dir, 'here', 'openapi_examples')).sort(),
    readdirSync('openapi_examples').sort(),
    'every external example kept',
  );
  const lines = writeSpecmaticSpec(join(dir, 'fixture'), stringify(specWithUnsafeOperations()));
  t.match(lines, [
    /^left out of Specmatic: deletePet \(DELETE \/pets\/\{petId\} is unsafe and names a resource/,
    /updatePet/,
  ]);
  const written = parse(readFileSync(join(dir, 'fixture', 'openapi.yaml'), 'utf8')) as Record<string, any>;
  t.same(Object.keys(written['paths']['/pets/{petId}']).sort(), ['get'], 'only the read stays on the resource');
  t.same(Object.keys(written['paths']['/pets']).sort(), ['get', 'post'], 'the collection stays whole');
  t.same(
    Object.keys(written['paths']['/pets']['post']['responses']['201']['links']).sort(),
    ['getPet', 'listPetsById'],
    'no link to an operation left out',
  );
});
