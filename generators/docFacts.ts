// npm run generate: the facts the hand-written READMEs state that openapi.yaml decides, written from it so
// that they cannot drift. README.md carries info.version between <!-- info.version --> markers; the client's
// README names the tarball npm pack makes (pet-store-client-<info.version>.tgz). Argument (for npm run
// generate -- --check): the folder to write the two files into, as repository paths; default the repository.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../lib/repoRoot.js';
import { specPath } from '../src/openapi/files.js';

const [outRoot = repoRoot] = process.argv.slice(2);
const { version } = (parse(readFileSync(specPath, 'utf8')) as { info: { version: string } }).info;

const versionMarker = /(<!-- info\.version -->)[^<]*(<!-- \/info\.version -->)/g;
const clientTarball = /pet-store-client-\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?\.tgz/g;

/** Rewrites one file from the repository into outRoot; fails when it has no place for the fact. */
function rewrite(path: string, pattern: RegExp, replacement: string): void {
  const text = readFileSync(join(repoRoot, path), 'utf8');
  if (text.search(pattern) === -1)
    throw new Error(`${path}: nothing matches ${pattern.source}, so its version cannot be kept`);
  const out = join(outRoot, path);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, text.replace(pattern, replacement));
}

rewrite('README.md', versionMarker, `$1${version}$2`);
rewrite('clients/typescript/README.md', clientTarball, `pet-store-client-${version}.tgz`);
