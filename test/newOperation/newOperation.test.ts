import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { blockPattern } from '../../lib/generatedBlocks.js';
import { freePort } from '../../lib/instances/index.js';
import { firstPanelId } from '../../lib/objectives/dashboard.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { copyOfRepo, type RepoCopy } from '../helpers/repoCopy.js';
import { testServerEnv } from '../helpers/processes.js';
import { dbFunctions, deletePetHandler, linksYaml, operationsYaml, schemaYaml, updatePetHandler } from './additions.js';

/**
 * The spec drives a new operation: in a copy of the repository, DELETE /pets/{petId} and PATCH /pets/{petId}
 * are added with only openapi.yaml, one handler file each with its entry in the handler map, and one db
 * function each (./additions.ts). Then npm run generate, and every tool runs green on the result with nothing
 * else edited by hand: the contract gate, typecheck, lint, the conformance suite (stateful phase included),
 * the client (its two new methods, typed), and npm run verify in write mode against a server holding pets
 * created before the run, which must all be there, unchanged, afterwards.
 */

const handEdited = [
  'openapi.yaml',
  'src/handlers/deletePet.ts',
  'src/handlers/updatePet.ts',
  'src/handlers/index.ts',
  'src/db/pets.ts',
];

function edit(copy: RepoCopy, path: string, change: (text: string) => string): void {
  const file = join(copy.root, path);
  const before = readFileSync(file, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`${path}: the edit changed nothing`);
  writeFileSync(file, after);
}

function addOperations(copy: RepoCopy): void {
  edit(copy, 'openapi.yaml', (text) =>
    text
      .replace(/^components:\n/m, `${operationsYaml}components:\n`)
      .replace(/^ {2}schemas:\n/m, `  schemas:\n${schemaYaml}`)
      .replace(/^( {10}links:\n)/m, `$1${linksYaml}`),
  );
  writeFileSync(join(copy.root, 'src/handlers/deletePet.ts'), deletePetHandler);
  writeFileSync(join(copy.root, 'src/handlers/updatePet.ts'), updatePetHandler);
  edit(copy, 'src/handlers/index.ts', (text) =>
    text
      .replace(
        "import { createPet } from './createPet.js';",
        "import { createPet } from './createPet.js';\nimport { deletePet } from './deletePet.js';",
      )
      .replace(
        "import { listPets } from './listPets.js';",
        "import { listPets } from './listPets.js';\nimport { updatePet } from './updatePet.js';",
      )
      .replace(
        '    getPet: getPet(deps),\n',
        '    getPet: getPet(deps),\n    deletePet: deletePet(deps),\n    updatePet: updatePet(deps),\n',
      ),
  );
  edit(copy, 'src/db/pets.ts', (text) => `${text}${dbFunctions}`);
}

/** The dashboard without the panels the objectives generate (ids from firstPanelId on). */
function handPanels(text: string): string {
  const dashboard = JSON.parse(text) as { panels: Array<{ id: number }> };
  return JSON.stringify({ ...dashboard, panels: dashboard.panels.filter((panel) => panel.id < firstPanelId) });
}

/** Files npm run generate changed: each must be generated whole, or changed only inside its generated blocks. */
function handTouched(copy: RepoCopy, changed: string[]): string[] {
  const outsideBlocks = (text: string) => text.replace(blockPattern('[^>]+', true), '<generated block>').trimEnd();
  return changed.filter((path) => {
    const now = readFileSync(join(copy.root, path), 'utf8');
    if (/generated|never edit/i.test(now.split('\n', 3).join('\n'))) return false;
    if (['src/generated/', 'clients/typescript/src/generated/'].some((folder) => path.startsWith(folder))) return false;
    const before = copy.git('show', `HEAD:${path}`);
    if (path === 'deploy/grafana/dashboard.json') return handPanels(before) !== handPanels(now);
    return outsideBlocks(before) !== outsideBlocks(now) || !blockPattern('[^>]+', true).test(now);
  });
}

function changedFiles(copy: RepoCopy): string[] {
  const lines = (...args: string[]) =>
    copy
      .git(...args)
      .split('\n')
      .filter(Boolean);
  return [...lines('diff', '--name-only', 'HEAD'), ...lines('ls-files', '--others', '--exclude-standard')];
}

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

async function startServer(copy: RepoCopy, t: Test) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'pets-new-operation-'));
  const apiKey = randomBytes(24).toString('base64url');
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DATA_DIR: dataDir, BOOTSTRAP_API_KEY: apiKey };
  for (const name of ['DATABASE_URL', 'HOST']) delete env[name];
  const server = spawn(process.execPath, ['dist/server.js'], {
    cwd: copy.root,
    env: { ...env, ...testServerEnv, LOG_LEVEL: 'warn', METRICS_PORT: 'off', RATE_LIMIT_MAX: '100000' },
    stdio: 'ignore',
  });
  t.teardown(() => {
    server.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  });
  const base = `http://127.0.0.1:${port}/v1`;
  for (let attempt = 0; ; attempt++) {
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (attempt > 240 || server.exitCode !== null) throw new Error("the copy's server did not become ready");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, json: (await response.json().catch(() => undefined)) as unknown };
  };
  return { base, apiKey, call };
}

t.test('two operations added with only the spec, handlers and SQL: every tool green, no other hand edit', async (t) => {
  const copy = copyOfRepo();
  t.teardown(copy.remove);
  addOperations(copy);
  copy.git('add', '-A');
  copy.git('commit', '--quiet', '-m', 'deletePet and updatePet, by hand');

  const run = (label: string, command: string, args: string[]) => {
    const result = copy.run(command, args);
    if (result.status !== 0) t.comment(result.output.slice(-6000));
    t.equal(result.status, 0, label);
    return result;
  };

  run('npm run generate', 'bash', ['scripts/run.sh', 'generate']);
  const generated = changedFiles(copy);
  t.same(handTouched(copy, generated), [], `npm run generate wrote only generated text: ${generated.join(', ')}`);
  t.same(
    changedFiles(copy).filter((path) => handEdited.includes(path) && path !== 'openapi.yaml'),
    [],
    'and no handler or SQL',
  );
  copy.git('add', '-A');
  copy.git('commit', '--quiet', '-m', 'npm run generate');

  run('contract lint', 'bash', ['scripts/run.sh', 'contract', 'lint']);
  run('contract breaking', 'bash', ['scripts/run.sh', 'contract', 'breaking']);
  run('version and changelog', 'npx', ['--no-install', 'tsx', 'scripts/contract/version.ts']);
  run('generate --check', 'bash', ['scripts/run.sh', 'generate', '--check']);
  run('check:migrations (the previous release cached beside this tree)', 'npx', [
    '--no-install',
    'tsx',
    'scripts/migrations/check.ts',
    '--cache',
    join(repoRoot, '.run/releases'),
  ]);
  run('typecheck (server, tools and client)', 'npm', ['run', '--silent', 'typecheck']);
  run('lint', 'npm', ['run', '--silent', 'lint']);

  // The client has a typed method per new operation: this compiles only if they exist with these types.
  const probe = join(copy.root, 'clients/typescript/src/newOperationsProbe.ts');
  writeFileSync(
    probe,
    [
      "import { PetStore, type Pet } from './index.js';",
      'export async function probe(store: PetStore): Promise<Pet> {',
      '  const removed: void = await store.deletePet(1);',
      "  const changed: Pet = await store.updatePet(1, { status: 'sold' });",
      '  // @ts-expect-error updatePet takes a PetChange: categoryId is not one of its fields',
      '  await store.updatePet(1, { categoryId: 2 });',
      '  return removed ?? changed;',
      '}',
      '',
    ].join('\n'),
  );
  run('the client has deletePet and updatePet, typed', 'npx', ['--no-install', 'tsc', '-p', 'clients/typescript']);
  rmSync(probe);

  run('the conformance suite (stateful phase included)', 'bash', [
    '-c',
    'npx --no-install tap test/conformance/*.test.ts',
  ]);

  run('npm run build', 'npm', ['run', '--silent', 'build']);
  const server = await startServer(copy, t);
  const before: Pet[] = [];
  // Ids 1 to 100, the examples' 1 among them: what a tool aiming at foreign ids would hit first.
  for (let i = 0; i < 100; i++) {
    const created = await server.call('POST', '/pets', { name: `before-${i}`, categoryId: 1 + (i % 20) });
    before.push(created.json as Pet);
  }
  // Ids the run's generated requests will hit most: 1 up, and the spec's examples (found: 1).
  t.ok(
    before.some((pet) => pet.id === 1),
    'pet 1 exists, as the examples assume',
  );
  const verify = run('npm run verify in write mode', 'npx', [
    '--no-install',
    'tsx',
    'scripts/verify/cli.ts',
    '--base-url',
    server.base,
    '--api-key',
    server.apiKey,
    // 200 generated requests per operation: with this seed one DELETE and one PATCH draw an id from 1 to
    // 100, so a verify that aimed unsafe requests at whatever id it drew would remove or change a pet.
    '--max-requests',
    '3000',
    '--seed',
    '1',
  ]);
  t.match(verify.output, /deletePet|DELETE/, 'verify reached the new operations');
  const after = await server.call('GET', `/pets?${before.map((pet) => `id=${pet.id}`).join('&')}`);
  t.same(after.json, before, 'every pet that existed before the run is there, unchanged');
  t.equal((await server.call('DELETE', `/pets/${before[0]!.id}`)).status, 204, 'deletePet works');

  const tracked = copy.git('diff', '--name-only', 'HEAD').split('\n').filter(Boolean);
  t.same(tracked, [], 'no tool changed a tracked file');
});
