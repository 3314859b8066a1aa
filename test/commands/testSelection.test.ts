import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { repoRoot } from '../../lib/repoRoot.js';
import { readsSpec, specDriven, usesRuntime } from '../../scripts/tests/rules.js';

// The rules that choose what CI runs on the other Node.js lines (npm test -- runtime) and what the worked
// examples run on their tree (npm test -- spec-driven, a part of what reads a spec, which npm test -- affected
// openapi.yaml chooses): each file below is chosen, or not, for its reason.
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
  for (const file of ['test/contract/breaking.test.ts', 'test/constructs/catalogue.test.ts']) {
    t.match(source(file), /from 'node:child_\w+'/, `${file} imports child_process`);
    t.notOk(usesRuntime(file, source(file)), file);
  }
});

// Each case below is a file that the loose rule (any import of a built-in) chose, for a use no line changes.
t.test('runtime: crypto only for random inputs, or child_process only for other programs, is left out', async (t) => {
  const randomOnly = 'test/apiKeys.test.ts';
  t.match(source(randomOnly), /import \{ randomBytes \} from 'node:crypto'/, 'it makes keys with randomBytes');
  t.notOk(usesRuntime(randomOnly, source(randomOnly)), randomOnly);
  const bashOnly = 'test/docs.test.ts';
  t.match(source(bashOnly), /execFileSync\('bash'/, 'it runs a recipe of the README in bash');
  t.notOk(usesRuntime(bashOnly, source(bashOnly)), bashOnly);
  const crypto = ["from 'node", ":crypto';"].join('');
  t.notOk(usesRuntime('test/x.test.ts', `import { randomInt, randomUUID } ${crypto}`), 'random inputs');
  t.notOk(usesRuntime('test/x.test.ts', `import type { KeyObject } ${crypto}`), 'a type of crypto');
  t.ok(usesRuntime('test/x.test.ts', `import { randomBytes, createHmac } ${crypto}`), 'an HMAC beside');
  t.ok(usesRuntime('test/x.test.ts', `import * as crypto ${crypto}`), 'all of crypto');
  const spawning = ["import { spawn } from 'node", ":child_process';\n"].join('');
  t.notOk(usesRuntime('test/x.test.ts', `${spawning}spawn('promtool', ['check']);`), 'another program');
  t.ok(usesRuntime('test/x.test.ts', `${spawning}spawn(process.execPath, ['src/server.ts']);`), 'Node.js');
  t.ok(usesRuntime('test/x.test.ts', `${spawning}spawn('npm', ['start']);`), 'npm');
});

t.test('runtime: a type of the wire counts, for the file holds a real socket or address', async (t) => {
  const file = 'test/hostile/oversizeBodies.test.ts';
  t.match(source(file), /import type \{ Socket \} from 'node:net'/);
  t.ok(usesRuntime(file, source(file)), file);
});

t.test("reads a spec: a file that reads a spec's operations is chosen, one that does not is left out", async (t) => {
  for (const file of [
    'test/conformance/properties/conformance.test.ts',
    'test/api.test.ts',
    'test/http/closedRequests.test.ts',
  ])
    t.ok(readsSpec(source(file)), file);
  for (const file of ['test/commands/cli.test.ts', 'test/dataDirLock.test.ts']) t.notOk(readsSpec(source(file)), file);
});

t.test('spec-driven: what a new operation can fail, not the tools judged on specs of their own', async (t) => {
  // The files below all read a spec's operations (npm test -- affected openapi.yaml chooses them).
  const newOperationCanFail = [
    'test/conformance/unsafe.test.ts',
    'test/conformance/links.test.ts',
    'test/commands/verify.test.ts',
    'test/typescriptClient/methods.test.ts',
    'test/contract/patterns.test.ts',
    'test/contract/arazzo.test.ts',
  ];
  const toolsOnOwnSpecs = [
    'test/contract/corpora/reviewPullRequests.test.ts',
    'test/contract/corpora/breakingCorpus.test.ts',
    'test/contract/breakingAdmitted.test.ts',
    'test/contract/changelog.test.ts',
    'test/contract/version.test.ts',
    'test/constructs/verify.test.ts',
    'test/constructs/http.test.ts',
  ];
  for (const file of [...newOperationCanFail, ...toolsOnOwnSpecs])
    t.ok(readsSpec(source(file)), `${file} reads a spec`);
  for (const file of newOperationCanFail) t.ok(specDriven(file, source(file)), `${file} is chosen`);
  for (const file of toolsOnOwnSpecs) t.notOk(specDriven(file, source(file)), `${file} is left out`);
});

t.test(
  "a chosen file of a folder run in one process runs in its folder's process, which loads the chosen only",
  async (t) => {
    const lines = execFileSync(
      process.execPath,
      ['--import=tsx', 'scripts/tests/select.ts', '--processes', 'affected', 'test/hostile/otherUser.ts'],
      { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    )
      .trim()
      .split('\n');
    t.ok(lines.length > 1, 'several files of test/hostile/ import it');
    for (const line of lines) t.match(line, /^test\/hostile\.test\.ts\ttest\/hostile\/\w+\.test\.ts$/, line);
    const runner = 'test/fixtures/oneProcess/runner.ts';
    const chosen = 'test/fixtures/oneProcess/folder/second.test.ts';
    const ran = (env: NodeJS.ProcessEnv) =>
      execFileSync(process.execPath, ['--import=tsx', runner], { cwd: repoRoot, encoding: 'utf8', env });
    const { PETS_TEST_FILES: _, ...unset } = process.env;
    t.match(ran(unset), /the first file ran[\s\S]*the second file ran/, 'none chosen: every file of the folder');
    const partial = ran({ ...unset, PETS_TEST_FILES: `test/other.test.ts ${chosen}` });
    t.match(partial, /the second file ran/, 'the chosen file');
    t.notMatch(partial, /the first file ran/, 'and no other');
  },
);
