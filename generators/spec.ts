// npm run generate (after openapi-typescript): openapi.yaml as JSON and its route table, for the server to
// read at start instead of parsing YAML and running fastify-openapi-glue's spec validation every time.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { OpenApiDocument } from '../src/openapi/document.js';
import { generatedRoutesPath, generatedSpecPath, specPath } from '../src/openapi/files.js';
import { computeRouteTable } from './routeTable.js';
import { toExactJson } from './exactJson.js';

const [specOut = generatedSpecPath, routesOut = generatedRoutesPath] = process.argv.slice(2);
const source = readFileSync(specPath, 'utf8');
// The JSON is served as /v1/openapi.json: every integer with the digits the YAML has.
writeFileSync(specOut, `${toExactJson(parse(source, { intAsBigInt: true }))}\n`);
// The route table feeds ajv, which compares JavaScript numbers.
const spec = parse(source) as OpenApiDocument;
writeFileSync(routesOut, `${JSON.stringify(await computeRouteTable(spec), null, 2)}\n`);
