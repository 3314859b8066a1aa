import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { errorCodeTable } from '../../generators/prose/errorCodes.js';
import { idempotentOperationList, operationTable, scopeList } from '../../generators/prose/operations.js';
import { blockContent, withBlock } from '../../lib/generatedBlocks.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { parametersOf, type OpenApiDocument, type OperationObject } from '../../src/openapi/document.js';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
const specText = read('openapi.yaml');
const spec = parse(specText) as OpenApiDocument;

t.test('a generated block keeps its indentation and the text around it', async (t) => {
  const yaml = 'a: |\n  before\n\n  <!-- BEGIN generated: x -->\n  old\n  <!-- END generated: x -->\n  after\n';
  const out = withBlock(yaml, 'x', '| a |\n\n| b |', 'test');
  t.equal(
    out,
    'a: |\n  before\n\n  <!-- BEGIN generated: x -->\n  | a |\n\n  | b |\n  <!-- END generated: x -->\n  after\n',
  );
  t.equal(blockContent(out, 'x'), '| a |\n\n| b |');
  t.equal(withBlock(out, 'x', '| a |\n\n| b |', 'test'), out, 'the same content twice changes nothing');
  t.equal(withBlock(out, 'x', '$& $1 $`', 'test').includes('$& $1 $`'), true, 'content is taken literally');
  t.throws(() => withBlock('no markers', 'x', 'y', 'where.md'), /where\.md: no <!-- BEGIN generated: x -->/);
});

t.test('every operation of the spec, its request and its scope are in the generated prose', async (t) => {
  const table = operationTable(spec);
  const scopes = scopeList(spec);
  for (const [path, item] of Object.entries(spec.paths))
    for (const [method, operation] of Object.entries(item as Record<string, { operationId: string }>)) {
      t.match(table, `| \`${operation.operationId}\``, operation.operationId);
      t.match(table, `\`${method.toUpperCase()} ${path}\``);
      t.match(scopes, operation.operationId);
    }
  // The places that state them hold what the spec says now (npm run generate -- --check fails otherwise).
  t.equal(blockContent(specText, 'operations'), table, "info.description's table");
  t.equal(blockContent(specText, 'scopes'), scopes, "bearerAuth's list of scopes");
  t.equal(blockContent(read('docs/api.md'), 'operations'), table, "docs/api.md's table");
});

t.test('docs/api.md lists the operations that declare an Idempotency-Key, from the spec', async (t) => {
  const list = idempotentOperationList(spec);
  for (const [path, item] of Object.entries(spec.paths))
    for (const [method, operation] of Object.entries(item as Record<string, OperationObject>)) {
      const declares = parametersOf(spec, operation).some(
        (parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key',
      );
      t.equal(list.includes(`\`${method.toUpperCase()} ${path}\``), declares, operation.operationId);
    }
  t.not(list, '', 'some operation takes a key');
  t.equal(blockContent(read('docs/api.md'), 'idempotent-operations'), list, "docs/api.md's list");
  // The prose around the list names no request by hand.
  const section = read('docs/api.md').split('## Retrying a create')[1]?.split('\n## ')[0] ?? '';
  const prose = section.replace(/<!-- BEGIN generated[\s\S]*?END generated: idempotent-operations -->/, '');
  t.notMatch(prose.split('```')[0], /`(?:GET|POST|PUT|PATCH|DELETE) \//, 'no request named by hand before the example');
});

t.test('no count of operations is written by hand', async (t) => {
  const numbers = 'one|two|three|four|five|six|seven|eight|nine|ten|\\d+';
  const count = new RegExp(`\\b(?:${numbers}) (?:operations|endpoints)\\b`, 'i');
  for (const path of ['openapi.yaml', 'README.md', 'ARCHITECTURE.md', 'docs/api.md', 'docs/contract.md'])
    t.notMatch(read(path), count, path);
});

t.test("docs/errors.md's codes are every code of every Error-shaped schema in the spec", async (t) => {
  const table = errorCodeTable(spec);
  t.equal(blockContent(read('docs/errors.md'), 'error-codes'), table, 'the generated block is the spec now');
  const schemas = (
    spec.components as unknown as { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }> }
  ).schemas;
  for (const [name, schema] of Object.entries(schemas)) {
    const shaped = ['code', 'message', 'status'].every((key) => schema.properties?.[key] !== undefined);
    for (const code of shaped ? (schema.properties?.['code']?.enum ?? []) : [])
      t.match(table, `| \`${code}\` |`, `${name}: ${code}`);
  }
});

t.test('a new error code is its schema in the spec: the table follows, a code without its row fails', async (t) => {
  const withSchema = (description: string) => {
    const copy = structuredClone(spec) as OpenApiDocument & { components: { schemas: Record<string, unknown> } };
    copy.components.schemas['PreconditionError'] = {
      description,
      type: 'object',
      properties: {
        code: { type: 'string', enum: ['precondition_failed'] },
        message: { type: 'string' },
        status: { type: 'integer', enum: [412] },
      },
    };
    return copy;
  };
  const table = errorCodeTable(
    withSchema(
      'If-Match did not hold.\n\n| code | status | when |\n|---|---|---|\n| precondition_failed | 412 | the ETag sent is not current |\n',
    ),
  );
  t.match(table, '| `precondition_failed` | 412 | the ETag sent is not current (schema `PreconditionError`) |');
  t.throws(() => errorCodeTable(withSchema('No table.')), /PreconditionError's code precondition_failed needs its row/);
  t.throws(
    () =>
      errorCodeTable(
        withSchema('| code | status | when |\n|---|---|---|\n| precondition_failed | 412 | x |\n| stale | 412 | y |'),
      ),
    /PreconditionError's description has a row for stale, which its code enum lacks/,
  );
});
