// npm run generate (after openapi-typescript): openapi.yaml as JSON and its route table, for the server to
// read at start instead of parsing YAML and running fastify-openapi-glue's spec validation every time.
import { readFileSync, writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { isMap, parse, parseDocument, type YAMLSeq } from 'yaml';
import type { OpenApiDocument } from '../src/openapi/document.js';
import {
  generatedRoutesPath,
  generatedSpecPath,
  publishedJsonPath,
  publishedYamlPath,
  specPath,
} from '../src/openapi/files.js';
import { publishedSpec } from '../src/openapi/published.js';
import { computeRouteTable } from './routeTable.js';
import { toExactJson } from './exactJson.js';

const [
  specOut = generatedSpecPath,
  routesOut = generatedRoutesPath,
  publishedJsonOut = publishedJsonPath,
  publishedYamlOut = publishedYamlPath,
] = process.argv.slice(2);
const source = readFileSync(specPath, 'utf8');
writeFileSync(specOut, `${toExactJson(parse(source, { intAsBigInt: true }))}\n`);
// What /v1/openapi.json serves: every integer with the digits the YAML has, internal servers left out.
writeFileSync(publishedJsonOut, `${toExactJson(publishedSpec(parse(source, { intAsBigInt: true }) as object))}\n`);
writeFileSync(publishedYamlOut, publishedYaml(source));
// The route table feeds ajv, which compares JavaScript numbers.
const spec = parse(source) as OpenApiDocument;
writeFileSync(routesOut, `${JSON.stringify(await computeRouteTable(spec), null, 2)}\n`);

/**
 * openapi.yaml as /v1/openapi.yaml serves it: the checked-in text, comments
 * and layout kept, with the lines of each internal server cut out (never
 * re-serialised); checked to parse to the published spec.
 */
function publishedYaml(text: string): string {
  const servers = parseDocument(text).get('servers') as YAMLSeq | undefined;
  const cuts = (servers?.items ?? [])
    .filter((item) => isMap(item) && item.get('x-internal') === true)
    .map((item) => {
      const range = (item as { range?: [number, number, number] }).range;
      if (range === undefined) throw new Error('a server of openapi.yaml has no source range');
      return [text.lastIndexOf('\n', range[0]) + 1, range[2]] as const;
    });
  let published = text;
  for (const [start, end] of cuts.reverse()) published = published.slice(0, start) + published.slice(end);
  const expected = publishedSpec(parse(text, { intAsBigInt: true }) as object);
  if (!isDeepStrictEqual(parse(published, { intAsBigInt: true }), expected))
    throw new Error('cutting the internal servers out of openapi.yaml changed more than its servers');
  return published;
}
