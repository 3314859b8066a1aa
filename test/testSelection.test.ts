import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { repoRoot } from '../lib/repoRoot.js';
import { readsSpec, usesRuntime } from '../scripts/tests/rules.js';

// The rules that choose what CI runs on the other Node.js lines (npm test -- runtime) and what the worked
// examples run on their tree (npm test -- spec-driven): each file below is chosen, or not, for its reason.
const source = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

t.test('runtime: a file that starts processes, opens sockets, hashes or fetches is chosen', async (t) => {
  for (const file of ['test/processLifecycle.test.ts', 'test/hostile/pipelining.test.ts', 'test/shutdown.test.ts'])
    t.ok(usesRuntime(file, source(file)), file);
  // Written in two parts, so that this file is not chosen by its own fixtures.
  t.ok(usesRuntime('test/x.test.ts', ["import { createHash } from 'node", ":crypto';"].join('')), 'node:crypto');
  t.ok(usesRuntime('test/x.test.ts', ['const answer = await fetch', "('http://127.0.0.1/');"].join('')), 'fetch');
  t.notOk(usesRuntime('test/x.test.ts', "import { join } from 'node:path';"), 'node:path is the same on every line');
});

t.test('runtime: a file that judges a spec uses processes as a tool, and is left out', async (t) => {
  const file = 'test/contract/breaking.test.ts';
  t.match(source(file), /from 'node:child_\w+'/, 'it imports child_process');
  t.notOk(usesRuntime(file, source(file)), file);
});

t.test("spec-driven: a file that reads a spec's operations is chosen, one that does not is left out", async (t) => {
  for (const file of ['test/conformance/conformance.test.ts', 'test/api.test.ts', 'test/http/closedRequests.test.ts'])
    t.ok(readsSpec(source(file)), file);
  for (const file of ['test/cli.test.ts', 'test/dataDirLock.test.ts']) t.notOk(readsSpec(source(file)), file);
});
