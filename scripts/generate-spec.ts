// npm run generate (after openapi-typescript): openapi.yaml as JSON and its route table, for the server to
// read at start instead of parsing YAML and running fastify-openapi-glue's spec validation every time.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { OpenApiDocument } from '../src/openapi/document.js';
import { generatedRoutesPath, generatedSpecPath, specPath } from '../src/openapi/files.js';
import { computeRouteTable } from '../src/http/contract/routeTable.js';

const [specOut = generatedSpecPath, routesOut = generatedRoutesPath] = process.argv.slice(2);
const spec = parse(readFileSync(specPath, 'utf8')) as OpenApiDocument;
writeFileSync(specOut, `${JSON.stringify(spec, null, 2)}\n`);
writeFileSync(routesOut, `${JSON.stringify(await computeRouteTable(spec), null, 2)}\n`);
