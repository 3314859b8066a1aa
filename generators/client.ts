// npm run generate (after openapi-typescript): what the TypeScript client (clients/typescript) takes from
// openapi.yaml. Its types are the server's generated types, copied; its version is info.version; its table of
// declared error statuses comes from each operation's responses. Arguments (for npm run generate -- --check): the
// types to copy and the folder to write into, both defaulting to the checked-in ones.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { listOperations, parametersOf, type OpenApiDocument } from '../src/openapi/document.js';
import { specPath } from '../src/openapi/files.js';

const clientRoot = fileURLToPath(new URL('../clients/typescript/', import.meta.url));
const [typesSource = fileURLToPath(new URL('../src/generated/api.ts', import.meta.url)), outRoot = clientRoot] =
  process.argv.slice(2);

const spec = parse(readFileSync(specPath, 'utf8')) as OpenApiDocument & { info: { version: string } };
const generatedBy = '// Generated from openapi.yaml by npm run generate (generators/client.ts): never edit.\n';

/** The error statuses (4xx, 5xx) each operation declares, in ascending order. */
function errorStatuses(): Record<string, number[]> {
  const table: Record<string, number[]> = {};
  for (const { operation } of listOperations(spec)) {
    const responses = (operation as { responses?: Record<string, unknown> }).responses ?? {};
    table[operation.operationId] = Object.keys(responses)
      .map(Number)
      .filter((status) => status >= 400 && status <= 599)
      .sort((a, b) => a - b);
  }
  return table;
}

/** The largest page listPets serves (its limit parameter's maximum): pets() asks for pages this size. */
function maxPageSize(): number {
  const listPets = listOperations(spec).find(({ operation }) => operation.operationId === 'listPets')?.operation;
  const limit = listPets === undefined ? undefined : parametersOf(spec, listPets).find(({ name }) => name === 'limit');
  const maximum = (limit?.schema as { maximum?: unknown } | undefined)?.maximum;
  if (typeof maximum !== 'number') throw new Error("openapi.yaml: listPets has no 'limit' parameter with a maximum");
  return maximum;
}

const contract = [
  generatedBy,
  '/** info.version of openapi.yaml: the contract this client was generated from, and its own version. */',
  `export const apiVersion = ${JSON.stringify(spec.info.version)};`,
  '',
  "/** The largest page listPets serves (its limit parameter's maximum). */",
  `export const maxPageSize = ${maxPageSize()};`,
  '',
  '/** The error statuses each operation declares. */',
  `export const declaredErrorStatuses = ${JSON.stringify(errorStatuses())} as const;`,
  '',
].join('\n');

mkdirSync(join(outRoot, 'src/generated'), { recursive: true });
writeFileSync(join(outRoot, 'src/generated/api.ts'), readFileSync(typesSource, 'utf8'));
writeFileSync(join(outRoot, 'src/generated/contract.ts'), contract);
// The package's version is the contract's: a bumped info.version without npm run generate fails npm run generate -- --check.
const manifest = JSON.parse(readFileSync(join(clientRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
writeFileSync(
  join(outRoot, 'package.json'),
  `${JSON.stringify({ ...manifest, version: spec.info.version }, null, 2)}\n`,
);
