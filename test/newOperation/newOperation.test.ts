import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { constructsIn } from '../../lib/constructs/refusals.js';
import { blockPattern } from '../../lib/generatedBlocks.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { freePort } from '../../lib/instances/index.js';
import { firstPanelId } from '../../lib/objectives/dashboard.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { copyOfRepo, type RepoCopy } from '../helpers/repoCopy.js';
import { testServerEnv } from '../helpers/processes.js';
import {
  addCareAndPhoto,
  addOperations,
  carePhotoEdited,
  addOwners,
  addSubResource,
  endOfPathItem,
  handEdited,
  ownersEdited,
} from './apply.js';

/**
 * The spec drives a new operation and a new resource: in a copy of the repository, four worked examples are
 * added with only openapi.yaml, one handler file each with its entry in the handler map, their SQL, and for
 * a new resource its migration: notes under a pet with their own table (./subResource.ts: an idempotent
 * POST /pets/{petId}/notes and its list), then DELETE /pets/{petId} and PATCH /pets/{petId} (./additions.ts),
 * which land on their path item although it is no longer the last path, then a pet's care changed by a JSON
 * Merge Patch with If-Match (412) and its photo, PNG bytes put (201, then 204), read with its ETag (304) and
 * removed (./careAndPhoto.ts, with its own test file), then owners made by PUT at the client's id, with
 * conditional writes, a 412 code of their own and adoptions of pets refused by state (409) (./owners.ts,
 * with its own test file). Each example's names are its own: each applies on today's spec, and they apply
 * together, in one copy, with one generate and one run of each tool. Then npm run generate, and every tool runs
 * green on the result with nothing else edited by hand: the contract gate, the migrations' gate, typecheck (the
 * client's new methods, typed, among it), lint (what changed and what imports it: CI lints the whole tree
 * before the examples), the tests that read the spec (the conformance suite among them) and the examples' own,
 * the build, and npm run verify in write mode against a server holding pets, notes, photos, care and owners
 * made before the run, which must all be there, unchanged, afterwards.
 */

// The owners' example (./owners.ts) runs unless NEW_OPERATION_OWNERS=0 (to tell its failures from the others').
const withOwners = process.env['NEW_OPERATION_OWNERS'] !== '0';
// The care and photo example (./careAndPhoto.ts) runs unless NEW_OPERATION_CARE_PHOTO=0 (the same reason).
const withCarePhoto = process.env['NEW_OPERATION_CARE_PHOTO'] !== '0';
const edited = [
  ...new Set([
    ...handEdited,
    ...(withOwners ? ownersEdited : []),
    ...(withCarePhoto ? carePhotoEdited(withOwners) : []),
  ]),
];

/** The care and photo's lines of the client probe. */
const carePhotoProbe = [
  "  const care: { diet?: string; vet?: string } = await store.updatePetCare(1, { diet: 'fish' }, { ifMatch: '\"tag\"' });",
  '  await store.putPetPhoto(1, new Uint8Array([0x89, 0x50]));',
  '  const photo: Uint8Array = await store.getPetPhoto(1);',
  '  await store.deletePetPhoto(1);',
  '  // @ts-expect-error a CarePatch has no name',
  "  await store.updatePetCare(1, { name: 'Rex' });",
  '  void [care, photo];',
];

/** The owners' lines of the client probe. */
const ownersProbe = [
  "  await store.putOwner('ada', { name: 'Ada' }, { ifNoneMatch: '*' });",
  "  const owner: { id: string; name: string } = await store.getOwner('ada');",
  "  await store.putOwner('ada', { name: 'Ada L.' }, { ifMatch: '\"tag\"' });",
  "  await store.putAdoption('ada', 1);",
  '  const adoptions: Array<{ ownerId: string; petId: number }> = await store.listAdoptions(owner.id);',
  "  await store.deleteAdoption('ada', adoptions[0]?.petId ?? 1);",
  '  // @ts-expect-error putOwner takes a NewOwner',
  "  await store.putOwner('ada', { id: 'ada' });",
];

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
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: body instanceof Uint8Array ? body : JSON.stringify(body) }),
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const json = (() => {
      try {
        return JSON.parse(bytes.toString('utf8')) as unknown;
      } catch {
        return undefined;
      }
    })();
    return { status: response.status, replayed: response.headers.get('idempotent-replayed'), json, bytes };
  };
  return { base, apiKey, call };
}

/**
 * What a failed command printed that says why: each failed tap assertion with
 * the lines after it (its diagnostics), else the output's end.
 */
function failureExcerpt(output: string): string {
  const lines = output.split('\n');
  const failures = lines.flatMap((line, index) => (/^\s*(# )?\s*not ok /.test(line) ? [index] : []));
  if (failures.length === 0) return output.slice(-6000);
  return failures
    .slice(0, 5)
    .map((index) => lines.slice(index, index + 40).join('\n'))
    .join('\n...\n')
    .slice(0, 12_000);
}

/**
 * Each step's wall time, as a comment when it ends (so a run cut short still tells where its time went), and
 * the list of them with its sum (`report`): CI's budget is spent step by step.
 */
function stepClock(t: Test) {
  const times: Array<[string, number]> = [];
  const line = (label: string, ms: number) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${label}`;
  const timed = <T>(label: string, step: () => T): T => {
    const started = performance.now();
    try {
      return step();
    } finally {
      const ms = performance.now() - started;
      times.push([label, ms]);
      t.comment(`step: ${line(label, ms)}`);
    }
  };
  const report = () => {
    const total = times.reduce((sum, [, ms]) => sum + ms, 0);
    t.comment(['steps, wall time:', ...times.map(([label, ms]) => line(label, ms)), line('in all', total)].join('\n'));
  };
  return { timed, report };
}

t.test('resources and operations added with only the spec, handlers and SQL: every tool green', async (t) => {
  const { timed, report } = stepClock(t);
  const copy = timed('copy of the repository', copyOfRepo);
  t.teardown(copy.remove);
  const treeUnderTest = copy.git('rev-parse', 'HEAD');
  addSubResource(copy);
  addOperations(copy);
  if (withCarePhoto) addCareAndPhoto(copy, withOwners);
  if (withOwners) addOwners(copy);
  const spec = readFileSync(join(copy.root, 'openapi.yaml'), 'utf8');
  // The constructs lib/constructs/catalogue.ts marks supported by every machine through this suite: the
  // examples use each, and every tool below runs green on them.
  const used = new Set(constructsIn(parse(spec) as JsonObject).map(({ construct }) => construct.id));
  for (const id of ['response-no-content', ...(withCarePhoto ? ['media-json-suffix', 'media-bytes'] : [])])
    t.ok(used.has(id), `the worked examples use ${id}`);
  const pathItem = spec.slice(spec.indexOf('\n  /pets/{petId}:\n'), endOfPathItem(spec, '/pets/{petId}'));
  t.match(
    pathItem,
    /operationId: deletePet[\s\S]*operationId: updatePet/,
    'deletePet and updatePet are on /pets/{petId}',
  );
  t.notMatch(
    pathItem,
    /operationId: (createNote|listNotes|getPetCare|updatePetCare|putPetPhoto|getPetPhoto|deletePetPhoto)/,
    'and the notes, the care and the photo on their own paths',
  );
  t.same(changedFiles(copy).sort(), [...edited].sort(), 'git status: only the files a contributor writes');
  copy.git('add', '-A');
  copy.git('commit', '--quiet', '-m', 'notes, deletePet, updatePet, care, photo and owners, by hand');

  const run = (label: string, command: string, args: string[]) => {
    const result = timed(label, () => copy.run(command, args));
    if (result.status !== 0) t.comment(failureExcerpt(result.output));
    // A step that runs npm test says where its time went: the slowest files, as npm test ends.
    const slowest = /^# slowest test files of this run.*(\n# {3}.*)+/m.exec(result.output)?.[0];
    if (slowest !== undefined) t.comment(slowest.replace(/^# /gm, ''));
    t.equal(result.status, 0, label);
    return result;
  };

  run('npm run generate', 'bash', ['scripts/run.sh', 'generate']);
  const generated = changedFiles(copy);
  t.same(handTouched(copy, generated), [], `npm run generate wrote only generated text: ${generated.join(', ')}`);
  t.same(
    changedFiles(copy).filter((path) => edited.includes(path) && path !== 'openapi.yaml'),
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
      "  await store.createNote(1, { text: 'fed' });",
      '  await store.listNotes(1);',
      '  // @ts-expect-error createNote takes a NewNote',
      '  await store.createNote(1, { name: 2 });',
      ...(withCarePhoto ? carePhotoProbe : []),
      ...(withOwners ? ownersProbe : []),
      '  return removed ?? changed;',
      '}',
      '',
    ].join('\n'),
  );
  // One typecheck for the tree and the probe: the client's compile is the probe's proof.
  run(
    'typecheck (server, tools and client, the probe of the new methods: typed, with If-Match and If-None-Match as options)',
    'npm',
    ['run', '--silent', 'typecheck'],
  );
  rmSync(probe);
  // The whole lint passed on the tree under test (CI's lint stage): what the examples and generate changed,
  // and what imports it, is read again.
  const changed = copy.git('diff', '--name-only', treeUnderTest, 'HEAD').split('\n').filter(Boolean);
  run('lint: the changed files and what imports them', 'npm', [
    'run',
    '--silent',
    'lint',
    '--',
    'affected',
    ...changed,
  ]);
  // What the examples can change: the files a new operation can fail (scripts/tests/rules.ts, specDriven), and
  // the examples' own tests (the whole npm test runs once in CI, on the tree without the examples).
  const ownTests = edited.filter((path) => path.endsWith('.test.ts'));
  run("npm test -- spec-driven on the applied tree, with the examples' own tests", 'npm', [
    'test',
    '--',
    'spec-driven',
    ...(ownTests.length > 0 ? ['--also', ...ownTests] : []),
  ]);

  // npm run build with its type check left to the typecheck above, which reads src/ with the same options
  // (tsconfig.build.json extends tsconfig.json): tsc --noCheck emits, then the script copies what it copies.
  const { build } = (
    JSON.parse(readFileSync(join(copy.root, 'package.json'), 'utf8')) as { scripts: { build: string } }
  ).scripts;
  const emitOnly = build.replace(/^tsc -p tsconfig\.build\.json(?= )/, '$& --noCheck');
  t.not(emitOnly, build, "package.json's build starts with tsc -p tsconfig.build.json");
  run('npm run build, without a second type check of src/', 'bash', [
    '-c',
    `PATH="$PWD/node_modules/.bin:$PATH" && ${emitOnly}`,
  ]);
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
  // Notes on the first pets, made before the run: a tool writing under a pet it did not make would add some.
  const notesBefore: unknown[] = [];
  for (const pet of before.slice(0, 10)) {
    t.equal((await server.call('POST', `/pets/${pet.id}/notes`, { text: `before ${pet.id}` })).status, 201);
    notesBefore.push((await server.call('GET', `/pets/${pet.id}/notes`)).json);
  }
  // A photo and care on other pets, set before the run: a tool writing under a pet it did not make would change them.
  const png = { 'content-type': 'image/png' };
  const mergePatch = { 'content-type': 'application/merge-patch+json' };
  const photosAndCare = async () => {
    const found: unknown[] = [];
    for (const pet of withCarePhoto ? before.slice(15, 20) : []) {
      found.push((await server.call('GET', `/pets/${pet.id}/photo`)).bytes.toString('hex'));
      found.push((await server.call('GET', `/pets/${pet.id}/care`)).json);
    }
    return found;
  };
  for (const pet of withCarePhoto ? before.slice(15, 20) : []) {
    const photo = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, pet.id % 256, 0xff]);
    t.equal((await server.call('PUT', `/pets/${pet.id}/photo`, photo, png)).status, 201);
    t.equal((await server.call('PATCH', `/pets/${pet.id}/care`, { diet: `before ${pet.id}` }, mergePatch)).status, 200);
  }
  const photosAndCareBefore = await photosAndCare();
  // Owners made before the run, each with an adoption: a tool replacing an owner or adopting a pet it did not make would change them.
  const ownersBefore: unknown[] = [];
  for (const pet of withOwners ? before.slice(10, 15) : []) {
    const ownerId = `owner-${pet.id}`;
    t.equal((await server.call('PUT', `/owners/${ownerId}`, { name: `before ${pet.id}` })).status, 201);
    t.equal((await server.call('PUT', `/owners/${ownerId}/adoptions/${pet.id}`)).status, 201);
    ownersBefore.push((await server.call('GET', `/owners/${ownerId}`)).json);
    ownersBefore.push((await server.call('GET', `/owners/${ownerId}/adoptions`)).json);
  }
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
  const notesAfter: unknown[] = [];
  for (const pet of before.slice(0, 10)) notesAfter.push((await server.call('GET', `/pets/${pet.id}/notes`)).json);
  t.same(notesAfter, notesBefore, 'and their notes, unchanged');
  t.match(verify.output, /createNote/, 'verify reached the new resource');
  t.same(await photosAndCare(), photosAndCareBefore, 'their photos and care, unchanged');
  if (withCarePhoto) t.match(verify.output, /putPetPhoto/, 'verify reached the photo');
  if (withOwners) {
    const ownersAfter: unknown[] = [];
    for (const pet of before.slice(10, 15)) {
      ownersAfter.push((await server.call('GET', `/owners/owner-${pet.id}`)).json);
      ownersAfter.push((await server.call('GET', `/owners/owner-${pet.id}/adoptions`)).json);
    }
    t.same(ownersAfter, ownersBefore, 'the owners made before the run and their adoptions, unchanged');
    t.match(verify.output, /putOwner/, 'verify reached the owners');
  }
  t.equal((await server.call('DELETE', `/pets/${before[0]!.id}`)).status, 204, 'deletePet works');

  // A retry is answered from its key even once the pet it wrote under is gone; a new note there is a 404.
  const parent = (await server.call('POST', '/pets', { name: 'parent', categoryId: 1 })).json as Pet;
  const keyed = { 'idempotency-key': `note-${randomBytes(8).toString('hex')}` };
  const first = await server.call('POST', `/pets/${parent.id}/notes`, { text: 'fed' }, keyed);
  t.equal(first.status, 201, 'createNote with a key');
  t.equal((await server.call('DELETE', `/pets/${parent.id}`)).status, 204);
  const retry = await server.call('POST', `/pets/${parent.id}/notes`, { text: 'fed' }, keyed);
  t.same(
    { status: retry.status, replayed: retry.replayed, json: retry.json },
    { status: 201, replayed: 'true', json: first.json },
    "createNote's retry after the pet was removed: the stored 201",
  );
  const fresh = { 'idempotency-key': `note-${randomBytes(8).toString('hex')}` };
  t.equal(
    (await server.call('POST', `/pets/${parent.id}/notes`, { text: 'fed' }, fresh)).status,
    404,
    'a new key under the removed pet: 404',
  );

  const tracked = copy.git('diff', '--name-only', 'HEAD').split('\n').filter(Boolean);
  t.same(tracked, [], 'no tool changed a tracked file');
  report();
});
