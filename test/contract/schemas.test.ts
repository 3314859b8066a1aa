import { readFileSync } from 'node:fs';
import t from 'tap';
import { createAjv } from '../../src/http/operations/ajv.js';
import type { RouteEntry } from '../../src/openapi/document.js';
import { generatedRoutesPath } from '../../src/openapi/files.js';

// At run time the service's ajv instances skip the meta-schema check (a cold
// start would pay 30-60 ms per instance for it), so it is made here, on every
// schema the routes hand to ajv: a malformed schema fails the suite instead.
const routes = JSON.parse(readFileSync(generatedRoutesPath, 'utf8')) as RouteEntry[];
type Schema = Record<string, unknown>;

function schemasOf(content: unknown): Schema[] {
  const media = (content as { content?: Record<string, { schema?: Schema }> }).content ?? {};
  return Object.values(media).flatMap((type) => (type.schema ? [type.schema] : []));
}

/** Each schema a route validates with: parameters, headers, body and every response body. */
function routeSchemas(route: RouteEntry): [string, Schema][] {
  const { querystring, params, headers, body, response } = route.schema as Record<string, Schema | undefined>;
  const named: [string, Schema][] = [];
  for (const [part, schema] of Object.entries({ querystring, params, headers })) if (schema) named.push([part, schema]);
  for (const schema of body ? schemasOf(body) : []) named.push(['body', schema]);
  for (const [status, reply] of Object.entries(response ?? {})) {
    for (const schema of schemasOf(reply)) named.push([`response ${status}`, schema]);
  }
  return named;
}

const checker = createAjv({ validateSchema: true });

function metaSchemaErrors(schema: Schema): string | undefined {
  return checker.validateSchema(schema) ? undefined : checker.errorsText(checker.errors);
}

t.test('the meta-schema check rejects a malformed schema (this test can fail)', async (t) => {
  t.match(metaSchemaErrors({ type: 'string', minLength: '1' }), /minLength/);
  t.match(metaSchemaErrors({ type: 'object', required: 'name' }), /required/);
  t.equal(metaSchemaErrors({ type: 'string', minLength: 1 }), undefined);
});

t.test('every schema the routes validate with is valid JSON Schema 2020-12', async (t) => {
  let checked = 0;
  for (const route of routes) {
    for (const [part, schema] of routeSchemas(route)) {
      t.equal(metaSchemaErrors(schema), undefined, `${route.method} ${route.url} ${part}`);
      checked += 1;
    }
  }
  t.ok(checked >= 30, `${checked} schemas checked`);
});
