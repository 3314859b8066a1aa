import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { isSafe } from '../../lib/conformance/resources.js';
import { loadContract, type Operation } from '../../lib/conformance/spec.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { specPath } from '../../src/openapi/files.js';
import { writeSpecmaticSpec } from '../../scripts/contract/specmaticSpec.js';
import { specWithOwners } from '../conformance/ownersFixture.js';
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

/** What Specmatic must leave out of a spec, from the spec: every unsafe operation whose path names a resource. */
function unchainable(source: string): Operation[] {
  return loadContract(parse(source) as JsonObject).operations.filter(
    (operation) => !isSafe(operation) && operation.parameters.some((parameter) => parameter.in === 'path'),
  );
}

t.test("Specmatic's copy of the spec leaves out every unsafe operation on a resource, and says why", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'specmatic-spec-'));
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const fixture = stringify(specWithUnsafeOperations());
  for (const [name, source] of [
    ['here', readFileSync(specPath, 'utf8')],
    ['fixture', fixture],
  ] as const) {
    const leftOut = unchainable(source);
    const lines = writeSpecmaticSpec(join(dir, name), source);
    t.same(
      lines.map((line) => /^left out of Specmatic: (\S+) \(/.exec(line)?.[1]),
      leftOut.map((operation) => operation.operationId),
      `${name}: exactly the unsafe operations whose path names a resource are left out`,
    );
    for (const [index, operation] of leftOut.entries()) {
      const names = operation.parameters.filter((parameter) => parameter.in === 'path').map(({ name }) => name);
      t.match(
        lines[index],
        new RegExp(
          `${operation.method} ${operation.path.replace(/[{}]/g, '\\$&')} is unsafe and names a resource by ${names[0]}`,
        ),
        `${name}: ${operation.operationId} left out with its reason`,
      );
    }
    const spec = parse(source) as Record<string, any>;
    const written = parse(readFileSync(join(dir, name, 'openapi.yaml'), 'utf8')) as Record<string, any>;
    const removed = new Set(leftOut.map((operation) => operation.operationId));
    for (const [path, item] of Object.entries(spec['paths'] as Record<string, Record<string, any>>))
      for (const [method, operation] of Object.entries(item)) {
        const kept = !removed.has(operation.operationId as string);
        t.equal(
          method in (written['paths'][path] ?? {}),
          kept,
          `${name}: ${operation.operationId} ${kept ? 'kept' : 'gone'}`,
        );
        if (!kept) continue;
        for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, any>)) {
          const links = Object.entries((response.links ?? {}) as Record<string, { operationId: string }>);
          t.same(
            Object.keys(written['paths'][path][method]['responses'][status]['links'] ?? {}).sort(),
            links
              .filter(([, link]) => !removed.has(link.operationId))
              .map(([linkName]) => linkName)
              .sort(),
            `${name}: ${operation.operationId} ${status} keeps its links but those to what was left out`,
          );
        }
      }
  }
  // Whatever openapi.yaml holds (it may have unsafe operations on a resource of its own by now), the fixture
  // has some to leave out, and at least those openapi.yaml has.
  const here = unchainable(readFileSync(specPath, 'utf8')).length;
  t.ok(
    unchainable(fixture).length > 0 && unchainable(fixture).length >= here,
    'the fixture has operations to leave out',
  );
  t.same(
    readdirSync(join(dir, 'here', 'openapi_examples')).sort(),
    readdirSync('openapi_examples').sort(),
    'every external example kept',
  );
});

t.test("Specmatic's copy of a spec whose operation links to itself: left out with its own links", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'specmatic-self-link-'));
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const source = stringify(specWithOwners(), { aliasDuplicateObjects: false });
  t.match(source, /putOwner:\s+operationId: putOwner/, 'putOwner links to itself');
  const lines = writeSpecmaticSpec(dir, source);
  t.match(
    lines.join('\n'),
    /left out of Specmatic: putOwner \(PUT \/owners\/\{ownerId\} is unsafe and names a resource by ownerId \(made by putOwner\)/,
  );
  const written = parse(readFileSync(join(dir, 'openapi.yaml'), 'utf8')) as { paths: Record<string, object> };
  t.notOk('put' in written.paths['/owners/{ownerId}']!, 'and its operation is gone');
  t.ok('get' in written.paths['/owners/{ownerId}']!, 'the safe one stays');
});
