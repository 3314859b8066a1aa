// npm run generate (after openapi-typescript): what the TypeScript client (clients/typescript) takes from
// openapi.yaml. Its types are the server's generated types, copied, and every schema under its own name; its
// methods, one per operationId, and the table its transport reads (clientOperations.ts, clientSource.ts); its
// version is info.version; its table of declared error statuses comes from each operation's responses; its
// README's table of methods is its generated block client-methods. Arguments (for npm run
// generate -- --check, and for a test's fixture spec): the types openapi-typescript made, the folder to write
// into, and the spec, defaulting to the checked-in ones. writeClient does the same in the caller's process (the
// contract review's clients, a test's fixture client): no process of its own to start for each spec.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { parse } from 'yaml';
import { isMainModule } from '../src/entryPoint.js';
import { withBlock } from '../lib/generatedBlocks.js';
import type { JsonObject } from '../lib/openapi/dereference.js';
import { listOperations, parametersOf, type OpenApiDocument } from '../src/openapi/document.js';
import { specPath } from '../src/openapi/files.js';
import { clientOperations } from './clientOperations.js';
import { formerNames, generatedBy, methodTable, operationsSource, typesSource } from './clientSource.js';

const clientRoot = fileURLToPath(new URL('../clients/typescript/', import.meta.url));

type Spec = OpenApiDocument & { info: { version: string } };

/** The error statuses (4xx, 5xx) each operation declares, in ascending order. */
function errorStatuses(spec: Spec): Record<string, number[]> {
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
function maxPageSize(spec: Spec): number {
  const listPets = listOperations(spec).find(({ operation }) => operation.operationId === 'listPets')?.operation;
  const limit = listPets === undefined ? undefined : parametersOf(spec, listPets).find(({ name }) => name === 'limit');
  const maximum = (limit?.schema as { maximum?: unknown } | undefined)?.maximum;
  if (typeof maximum !== 'number') throw new Error("openapi.yaml: listPets has no 'limit' parameter with a maximum");
  return maximum;
}

/** src/generated/contract.ts: the spec's version, listPets' largest page and each operation's error statuses. */
function contractSource(spec: Spec): string {
  return [
    generatedBy,
    '/** info.version of openapi.yaml: the contract this client was generated from, and its own version. */',
    `export const apiVersion = ${JSON.stringify(spec.info.version)};`,
    '',
    "/** The largest page listPets serves (its limit parameter's maximum). */",
    `export const maxPageSize = ${maxPageSize(spec)};`,
    '',
    '/** The error statuses each operation declares. */',
    `export const declaredErrorStatuses = ${JSON.stringify(errorStatuses(spec))} as const;`,
    '',
  ].join('\n');
}

/**
 * Writes the client's generated files, README and package.json into outRoot: from the types openapi-typescript
 * made (the file apiTypes) and the spec in specFile.
 */
export async function writeClient(apiTypes: string, outRoot: string, specFile: string): Promise<void> {
  const spec = parse(readFileSync(specFile, 'utf8')) as Spec;
  const operations = clientOperations(spec as unknown as JsonObject);
  const schemas = (spec.components as { schemas?: Record<string, unknown> }).schemas ?? {};
  const schemaNames = Object.keys(schemas);

  mkdirSync(join(outRoot, 'src/generated'), { recursive: true });
  writeFileSync(join(outRoot, 'src/generated/api.ts'), readFileSync(apiTypes, 'utf8'));
  writeFileSync(join(outRoot, 'src/generated/contract.ts'), contractSource(spec));
  // Formatted as the hand-written code is, so that the methods read well where editors show their source.
  const prettierOptions = { ...(await resolveConfig(join(clientRoot, 'src/index.ts'))), parser: 'typescript' };
  for (const [name, source] of [
    ['types.ts', typesSource(schemaNames, operations, formerNames(schemas))],
    ['operations.ts', operationsSource(operations)],
  ] as const)
    writeFileSync(join(outRoot, 'src/generated', name), await format(source, prettierOptions));
  const readme = readFileSync(join(clientRoot, 'README.md'), 'utf8');
  writeFileSync(
    join(outRoot, 'README.md'),
    withBlock(readme, 'client-methods', methodTable(operations), 'clients/typescript/README.md'),
  );
  // The package's version is the contract's: a bumped info.version without npm run generate fails npm run generate -- --check.
  const manifest = JSON.parse(readFileSync(join(clientRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(
    join(outRoot, 'package.json'),
    `${JSON.stringify({ ...manifest, version: spec.info.version }, null, 2)}\n`,
  );
}

if (isMainModule(import.meta.url)) {
  const [
    apiTypes = fileURLToPath(new URL('../src/generated/api.ts', import.meta.url)),
    outRoot = clientRoot,
    specFile = specPath,
  ] = process.argv.slice(2);
  await writeClient(apiTypes, outRoot, specFile);
}
