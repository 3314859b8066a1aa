// npm run generate: the facts hand-written text states that openapi.yaml decides, written from it so that they
// cannot drift. Each file keeps its prose; npm run generate owns only:
// - the version and whether it is released (README.md's <!-- info.version --> markers, package.json's version,
//   src/generated/release.json for the start line, the client README's tarball name);
// - the operations with their scopes (a table in info.description and docs/api.md; a list in bearerAuth's
//   description; the scopes inline in README.md), and those that take an Idempotency-Key (a list in
//   docs/api.md), and the error codes (docs/errors.md, from the tables in the Error schemas' descriptions),
//   between <!-- BEGIN/END generated: NAME --> markers;
// - CHANGELOG.md's entries for the version under way (lib/contract/changelogSection.ts).
// Argument (for npm run generate -- --check): the folder to write the files into, as repository paths; default
// the repository.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import type { JsonObject } from '../lib/openapi/dereference.js';
import { repoRoot } from '../lib/repoRoot.js';
import { readContractFile } from '../lib/contract/load.js';
import { releasedFile, releasedVersions } from '../lib/contract/released.js';
import type { OpenApiDocument } from '../src/openapi/document.js';
import { specPath } from '../src/openapi/files.js';
import { withUnreleasedSection } from '../lib/contract/changelogSection.js';
import { withBlock } from '../lib/generatedBlocks.js';
import { errorCodeTable } from './prose/errorCodes.js';
import { idempotentOperationList, operationTable, scopeList, scopesInline } from './prose/operations.js';

const [outRoot = repoRoot] = process.argv.slice(2);
const specText = readFileSync(specPath, 'utf8');
const spec = parse(specText) as OpenApiDocument & { info: { version: string } };
const { version } = spec.info;
const released = releasedVersions();
const lastRelease = released.at(-1);
const isReleased = released.includes(version);

const versionMarker = /(<!-- info\.version -->)[^<]*(<!-- \/info\.version -->)/g;
const scopesMarker = /(<!-- scopes -->)[^<]*(<!-- \/scopes -->)/g;
const clientTarball = /pet-store-client-\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?\.tgz/g;
const statedVersion = isReleased ? version : `${version}, not yet released`;

/** The text with `value` between each pair of markers `pattern` matches; fails when the file has no place for it. */
function betweenMarkers(text: string, pattern: RegExp, value: string, path: string): string {
  if (text.search(pattern) === -1) throw new Error(`${path}: nothing matches ${pattern.source}`);
  return text.replace(pattern, (_match, open: string, close: string) => `${open}${value}${close}`);
}

function write(path: string, text: string): void {
  const out = join(outRoot, path);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text);
}

function rewrite(path: string, edit: (text: string) => string): void {
  write(path, edit(readFileSync(join(repoRoot, path), 'utf8')));
}

rewrite('openapi.yaml', (text) =>
  withBlock(
    withBlock(text, 'operations', operationTable(spec), 'openapi.yaml'),
    'scopes',
    scopeList(spec),
    'openapi.yaml',
  ),
);
rewrite('docs/errors.md', (text) => withBlock(text, 'error-codes', errorCodeTable(spec), 'docs/errors.md'));
rewrite('docs/api.md', (text) =>
  withBlock(
    withBlock(text, 'operations', operationTable(spec), 'docs/api.md'),
    'idempotent-operations',
    idempotentOperationList(spec),
    'docs/api.md',
  ),
);
rewrite('README.md', (text) =>
  betweenMarkers(
    betweenMarkers(text, versionMarker, statedVersion, 'README.md'),
    scopesMarker,
    scopesInline(spec),
    'README.md',
  ),
);
rewrite('clients/typescript/README.md', (text) => {
  if (text.search(clientTarball) === -1) throw new Error('clients/typescript/README.md: no pet-store-client-*.tgz');
  return text.replace(clientTarball, () => `pet-store-client-${version}.tgz`);
});
if (!isReleased && lastRelease !== undefined)
  rewrite('CHANGELOG.md', (text) =>
    withUnreleasedSection(text, readContractFile(releasedFile(lastRelease)), readContractFile(specPath) as JsonObject),
  );
// package.json and its lock say the version this tree builds (the image's tag); release.json whether it is out.
for (const path of ['package.json', 'package-lock.json'])
  rewrite(path, (text) => {
    const manifest = JSON.parse(text) as { version?: string; packages?: Record<string, { version?: string }> };
    manifest.version = version;
    const root = manifest.packages?.[''];
    if (root) root.version = version;
    return `${JSON.stringify(manifest, null, 2)}\n`;
  });
write(
  'src/generated/release.json',
  `${JSON.stringify({ version, released: isReleased, lastRelease: lastRelease ?? null }, null, 2)}\n`,
);
