import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { configValidatorSource } from '../../generators/configValidatorSource.js';
import { computeRouteTable } from '../../generators/routeTable.js';
import { listOperations, type OpenApiDocument, type RouteEntry } from '../../src/openapi/document.js';
import { generatedRoutesPath, generatedSpecPath, specPath } from '../../src/openapi/files.js';

// The server reads these instead of openapi.yaml; after editing the spec, `npm run generate` rewrites them.
const spec = parse(readFileSync(specPath, 'utf8')) as OpenApiDocument;
const stale = "out of step with openapi.yaml: run 'npm run generate' and commit src/generated";

t.test('src/generated/openapi.json is openapi.yaml', async (t) => {
  const json = readFileSync(generatedSpecPath, 'utf8');
  t.same(JSON.parse(json), spec, `openapi.json is ${stale}`);
  // With BigInts: as JavaScript numbers 9223372036854775807 and 9223372036854776000 are equal.
  const exactly = (text: string) => parse(text, { intAsBigInt: true }) as unknown;
  t.strictSame(exactly(json), exactly(readFileSync(specPath, 'utf8')), `its integers are openapi.yaml's digits`);
});

t.test('src/generated/routes.json is the route table fastify-openapi-glue derives from openapi.yaml', async (t) => {
  const fresh = JSON.parse(JSON.stringify(await computeRouteTable(spec))) as unknown;
  t.same(JSON.parse(readFileSync(generatedRoutesPath, 'utf8')), fresh, `routes.json is ${stale}`);
  const routed = (fresh as RouteEntry[]).map((route) => `${route.method} ${route.operationId}`).sort();
  const declared = listOperations(spec).map((entry) => `${entry.method} ${entry.operation.operationId}`);
  t.same(routed, declared.sort(), 'one route per operation, with the method declared (no HEAD beside a GET)');
});

t.test('src/generated/configValidator.js is what src/config/schema.ts compiles to', async (t) => {
  const generated = readFileSync(new URL('../../src/generated/configValidator.js', import.meta.url), 'utf8');
  t.equal(generated, configValidatorSource(), "configValidator.js is stale: run 'npm run generate' and commit it");
});
