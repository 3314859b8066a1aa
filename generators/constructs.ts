// npm run generate, first: refuses a spec that uses a construct some machine refuses (lib/constructs/), naming
// each with where it appears, who refuses it and the row of docs/constructs.md to read, before anything is
// written; then writes that matrix between its generated markers.
// Arguments: the spec (default openapi.yaml) and the folder to write docs/constructs.md into (default the
// repository; npm run generate -- --check passes a scratch folder).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parse } from 'yaml';
import { constructMatrix } from '../lib/constructs/matrix.js';
import { matrixPath, refusalReport, refusals } from '../lib/constructs/refusals.js';
import { withBlock } from '../lib/generatedBlocks.js';
import type { JsonObject } from '../lib/openapi/dereference.js';
import { repoRoot } from '../lib/repoRoot.js';
import { specPath } from '../src/openapi/files.js';

const [spec = specPath, outRoot = repoRoot] = process.argv.slice(2);
const found = refusals(parse(readFileSync(spec, 'utf8')) as JsonObject);
if (found.length > 0) {
  process.stderr.write(refusalReport(relative(process.cwd(), spec) || spec, found));
  process.exit(1);
}
const out = join(outRoot, matrixPath);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  withBlock(readFileSync(join(repoRoot, matrixPath), 'utf8'), 'constructs', constructMatrix(), matrixPath),
);
