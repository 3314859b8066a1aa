// npm run contract -- review end to end on five kinds of pull request (heads built by editing a copy of
// openapi.yaml, pullRequests.ts), with the clients the repo's generator makes from each side; its --json against
// contract/review.schema.json; and what every contract command does with options it cannot use or a broken $ref.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import t, { type Test } from 'tap';
import { loadContract } from '../../../lib/contract/load.js';
import { releasedFile, releasedVersions } from '../../../lib/contract/released.js';
import { repoRoot } from '../../../lib/repoRoot.js';
import { runBreaking } from '../../../scripts/contract/breaking.js';
import { clientsOf } from '../../../scripts/contract/clientDeclarations.js';
import { runChangelog } from '../../../scripts/contract/changelog.js';
import { runReview, type Comparison, type Review } from '../../../scripts/contract/review.js';
import { scratchDir } from '../../helpers/scratchSpace.js';
import { parse } from 'yaml';
import {
  additiveOnMain,
  answersCarrying,
  componentChanges,
  deprecateCreatePet,
  editedSpec,
  fresh,
  largeAdditive,
  mainText,
  renameWithAnyOf,
  retireToV2,
} from '../pullRequests.js';

const dir = scratchDir('pets-review-prs-');
t.teardown(() => {
  dir.remove();
});
/** A copy of openapi.yaml as it is: unreleased main. */
const main = join(dir.path, 'main.yaml');
writeFileSync(main, mainText);
const release = releasedFile(releasedVersions().at(-1)!);
const date = '2026-11-29';
/** The operations whose answers carry a Pet: each one gains the property the additive edits add to it. */
const answeringPets = [...answersCarrying(parse(mainText), 'Pet').keys()];
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let files = 0;
const specFile = (text: string) => {
  const file = join(dir.path, `head-${(files += 1)}.yaml`);
  writeFileSync(file, text);
  return file;
};

const heads = {
  renameWithAnyOf: specFile(editedSpec(renameWithAnyOf)),
  retireToV2: specFile(editedSpec(retireToV2)),
  largeAdditive: specFile(editedSpec(largeAdditive)),
  componentChanges: specFile(editedSpec(componentChanges)),
  additiveOnMain: specFile(editedSpec(additiveOnMain)),
  // Two weeks before `date`, and long after it.
  pastSunset: specFile(editedSpec(deprecateCreatePet('2026-11-15T00:00:00Z'))),
  futureSunset: specFile(editedSpec(deprecateCreatePet('2031-06-30T00:00:00Z'))),
};
// Every side's client generated and compiled in one TypeScript program up front (the reviews reuse them): one
// compiler run instead of one per review keeps this file's share of npm test small.
await clientsOf(
  [main, release, ...Object.values(heads)].map((file) => {
    const { document, text } = loadContract(file);
    return { document, text: text ?? '' };
  }),
);

const capture = () => {
  const io = { stdout: '', stderr: '' };
  return { io, output: { out: (text: string) => (io.stdout += text), err: (text: string) => (io.stderr += text) } };
};

async function reviewed(args: string[]) {
  const { io, output } = capture();
  const status = await runReview(args, output);
  return { status, ...io };
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validateReview = ajv.compile(JSON.parse(readFileSync(join(repoRoot, 'contract/review.schema.json'), 'utf8')));

/** The head's review as Markdown and as JSON (checked against the schema), against the given bases. */
async function reviewOf(t: Test, head: string, bases: string[] = [main]) {
  const args = [...bases.flatMap((base) => ['--base', base]), '--head', head, '--date', date];
  const markdown = await reviewed(args);
  t.equal(markdown.status, 0, 'the review is not a verdict', { stderr: markdown.stderr });
  const json = await reviewed([...args, '--json']);
  const report = JSON.parse(json.stdout) as Review;
  t.ok(validateReview(report), 'the --json output validates against contract/review.schema.json', {
    errors: validateReview.errors,
  });
  t.equal(report.comparisons.length, bases.length, 'one comparison per base, always a list');
  return { markdown: markdown.stdout, report, comparison: report.comparisons[0]! };
}

const sentencesOf = (comparison: Comparison) =>
  [...comparison.operations.flatMap((operation) => operation.changes), ...comparison.other].map(
    (change) => `${change.rule} ${change.pointer} ${change.consumer}`,
  );

t.test('(a) a field renamed with anyOf: the client section shows what the generated client became', async (t) => {
  const head = heads.renameWithAnyOf;
  const { markdown, comparison } = await reviewOf(t, head);
  t.match(
    markdown,
    /^## Contract review: `.*head-\d+\.yaml` \(1\.4\.0\) against `.*main\.yaml` \(1\.3\.0, not released\)/,
  );
  // Every body the base accepted has `name`, so it passes the anyOf: the values decide, and nothing old is refused.
  t.match(comparison.version, { needed: 'minor', enough: true }, 'the rename refuses no body the base accepted');
  // One branch still declares `name`, `categoryId` and `status`: the service reads them all, so nothing warns.
  t.notMatch(markdown, /no longer reads/, 'every property the base read, a branch of the head reads');
  t.match(markdown, /\(0 breaking, 0 warning, \d+ additive/);
  t.match(markdown, /additive: Requests may now send `displayName` in the request body\./);
  // The generator types the usual rename as a union (generators/apiTypes.ts), never `unknown`: the client section
  // shows NewPet gaining `displayName`, and createPet keeps a typed body.
  const { client } = comparison;
  t.equal(client.refused.head, undefined, 'the generator types the rename');
  const newPet = client.changed.find(({ name }) => name === 'NewPet');
  // Members in one key order on both sides (clientDeclarations.ts): the same contract gives the same declarations.
  t.match(newPet, { before: /^type NewPet = \{ categoryId: number; name: string;/, after: /displayName/ });
  t.notMatch(newPet?.after, /unknown/, 'NewPet is a type, not unknown');
  t.notMatch(
    client.changed.find(({ name }) => name === 'PetStore.createPet')?.after ?? '',
    /body: unknown/,
    'createPet keeps its body type',
  );
  t.notOk(
    client.changed.find(({ name }) => name === 'PetStore.getPet'),
    'a method answering with Pet names it: the new field is one change of Pet, not one per method',
  );
  t.match(
    markdown,
    /- changed `NewPet` \(what it does to calls is judged on the wire, above\):\n {2}- before: `type NewPet = \{ categoryId: number; name: string; .*\}`\n {2}- after: `type NewPet = .*displayName/,
  );
  t.notMatch(markdown, /No declaration of the client changes/);
  // The body widens by three rules at once: one sentence, said once with the three ids and a body that shows it.
  t.equal(markdown.match(/Requests may now send bodies that were refused before/g)?.length, 1, 'said once', {
    markdown,
  });
  t.match(
    markdown,
    /before still is\. \(`request-body-composition-changed`, `request-body-type-changed`, `request-body-additional-properties-allowed`\)\n {2}- for example `\{.*\}`: accepted by the head, refused by the base\n/,
  );
  t.match(markdown, /#### `createPet` \(POST \/pets\)\n/);
  // The anyOf's two schemas are 2,000 characters of JSON: the changelog's line quotes their start and length.
  const composition = markdown
    .split('\n')
    .find((line) => line.includes('(additive: `request-body-composition-changed`)'));
  t.match(composition, /anyOf `none` → `\[\{"type":"object",.*…` \([\d,]+ characters of JSON\)/);
  t.ok((composition ?? '').length < 400, 'a line a reviewer reads, not the schema', { composition });
});

t.test('(b) servers moving from /v1 to /v2: a retirement with a major version', async (t) => {
  const { markdown, comparison } = await reviewOf(t, heads.retireToV2);
  t.match(comparison.version, { made: 'major', enough: true });
  t.match(
    comparison.client.changed.find(({ name }) => name === 'apiVersion'),
    { after: 'apiVersion: "2.0.0"' },
  );
  t.match(markdown, /info\.version 2\.0\.0 is a major step from the last release 1\.2\.0: enough\./);
  t.ok(
    sentencesOf(comparison).some((line) => /\/v2/.test(line)),
    'the new base path is reported',
    { sentences: sentencesOf(comparison) },
  );
  t.equal(comparison.version.needed, 'major', 'a retirement needs a major step');
});

t.test('(c) a large additive change: new operations, a parameter, a response field; a minor step', async (t) => {
  const head = heads.largeAdditive;
  const { markdown, report } = await reviewOf(t, head, [release, main]);
  const [fromRelease, fromMain] = report.comparisons;
  t.match(fromRelease, {
    base: { released: true },
    version: { release: '1.2.0', needed: 'minor', made: 'minor', enough: true },
  });
  t.match(fromMain, {
    base: { released: false },
    version: { release: '1.2.0', needed: 'minor', made: 'minor', enough: true },
  });
  t.match(fromMain?.counts, { breaking: 0, warning: 0 });
  t.match(fromMain?.gate, { passed: true, breaking: 0 });
  const { notes } = fresh;
  t.same(
    fromMain?.operations.map(({ operationId }) => operationId).sort(),
    [...new Set([notes.create, notes.list, 'listPets', ...answeringPets])].sort(),
    'the new operations, listPets (a query parameter) and every operation answering a Pet (it gains a property)',
  );
  const added = fromMain?.client.added.map(({ name }) => name).sort();
  // Each method's result type (what .withResponse() resolves with) is exported beside it.
  const resultOf = (operationId: string) => `${operationId.charAt(0).toUpperCase()}${operationId.slice(1)}Result`;
  t.same(
    added,
    [
      notes.newSchema,
      notes.schema,
      resultOf(notes.create),
      resultOf(notes.list),
      `PetStore.${notes.create}`,
      `PetStore.${notes.list}`,
    ].sort(),
  );
  t.match(
    fromMain?.client.changed.find(({ name }) => name === 'ListPetsQuery'),
    { after: new RegExp(`; ${fresh.query}\\?: string; \\}$`) },
  );
  t.notOk(
    fromMain?.client.changed.find(({ name }) => name === 'PetStore.listPets'),
    'its query type names the change',
  );
  const path = escaped(notes.path);
  t.match(
    markdown,
    new RegExp(
      `#### \`${notes.list}\` \\(GET ${path}\\)\n\n- additive: GET ${path} is new: clients may start calling it\\. \\(\`endpoint-added\`\\)\n- scopes: \`bearerAuth \\[pets:read\\]\`\n- objectives: \`none\`\n- deprecation: \`not deprecated\`\n`,
    ),
  );
  // The body's type: NewNote's name, or the name of an equal schema the generator declared first.
  t.match(
    markdown,
    new RegExp(
      `- additive: a new method \`PetStore\\.${notes.create}\`: \`${notes.create}\\(petId: number, body: (?!unknown)\\w+, options\\?: CallOptions\\) => CallPromise<${resultOf(notes.create)}>\``,
    ),
  );
  t.equal(markdown.match(/^## Contract review/gm)?.length, 2, 'one section per base');
});

t.test('(d) parameter and header components changed: judged where they are used', async (t) => {
  const { comparison, markdown } = await reviewOf(t, heads.componentChanges);
  const headerChanges = comparison.operations
    .flatMap((operation) => operation.changes)
    .filter((change) => change.direction === 'response' && /X-Request-Id/i.test(change.message));
  const requestId = comparison.shared.find(({ component }) => component === '#/components/headers/RequestId');
  t.equal(requestId?.places.length, headerChanges.length, 'the shared header: one change, every place it reaches');
  t.equal(markdown.match(/^ {2}- one change of the shared header `RequestId`/gm)?.length, 1, 'said once in the text');
  const out = join(dir.path, 'review-d.md');
  const written = await reviewed(['--base', main, '--head', heads.componentChanges, '--date', date, '--out', out]);
  t.equal(written.status, 0);
  t.equal(written.stdout, '', '--out: nothing on stdout');
  t.equal(readFileSync(out, 'utf8'), markdown, '--out FILE: the same review, in the file');
  const getPet = comparison.operations.find(({ operationId }) => operationId === 'getPet');
  t.ok(
    getPet?.changes.some((change) => change.level === 'breaking' && change.direction === 'request'),
    'the narrowed petId refuses ids the base accepted',
    { changes: getPet?.changes },
  );
  t.ok(
    comparison.operations.every((operation) =>
      operation.changes.some((change) => change.direction === 'response' && /X-Request-Id/i.test(change.message)),
    ),
    'the header every response carries changed for every operation',
  );
  // Each bound is shown by a value it refuses: 0 shows the raised minimum only; the maximum, an int64 bound no built
  // value reaches exactly, is said from the bound.
  t.match(
    markdown,
    '- **breaking**: Requests with the path parameter `petId` set to `0`, accepted before, are now refused with 400. (`request-parameter-min-increased`)\n  - for example `0`',
  );
  t.match(
    markdown,
    '- **breaking**: Requests with the path parameter `petId` above `9007199254740991`, accepted before, are now refused with 400. (`request-parameter-max-decreased`)\n',
  );
  t.match(comparison.version, { needed: 'major', enough: false });
  t.ok(
    comparison.other.some((change) => /^\/components\/(parameters\/PetId|headers\/RequestId)/.test(change.pointer)),
    'the components themselves are compared',
    { other: comparison.other },
  );
  // The shared header changes every response component carrying it: the text names them in one line per kind,
  // the JSON keeps a change for each.
  const responses = comparison.other.filter((change) => change.rule === 'component-response-changed');
  t.ok(responses.length > 1, 'one change per response component in the JSON', { other: comparison.other });
  const [said, ...again] = markdown.match(/^- none: The response components? .*$/gm) ?? [];
  t.same(again, [], 'one line for every response component changed');
  t.equal(
    said,
    `- none: The response components ${responses
      .map((change) => `\`${change.pointer.split('/').pop()!}\``)
      .join(', ')
      .replace(
        /, ([^,]+)$/,
        ' and $1',
      )} changed: code generated from the components changes with them; each call that uses one is judged under its operation. (\`component-response-changed\`)`,
  );
});

t.test('(e) against unreleased main: only what the pull request adds is judged, from the last release', async (t) => {
  const head = heads.additiveOnMain;
  const { markdown, report } = await reviewOf(t, head, [release, main]);
  const [fromRelease, fromMain] = report.comparisons;
  t.match(fromRelease?.version, { release: '1.2.0', needed: 'minor', made: 'minor', enough: true });
  t.match(fromMain?.version, { release: '1.2.0', needed: 'minor', made: 'minor', enough: true });
  // Only the new field, once per answer carrying a Pet.
  const added = fromMain?.operations.flatMap((operation) => operation.changes) ?? [];
  t.match(fromMain?.counts, { breaking: 0, warning: 0, additive: added.length, none: 0 });
  t.ok(
    added.every(
      (change) => change.rule === 'response-optional-property-added' && change.message.includes(fresh.property),
    ),
    'every change is the new field in an answer',
    { added },
  );
  t.same(
    fromMain?.operations.map(({ operationId }) => operationId).sort(),
    [...answeringPets].sort(),
    'every operation answering a Pet gains it, and no other',
  );
  t.notMatch(markdown, /not enough/);
  const breakingOnMain = specFile(
    editedSpec((doc) => {
      additiveOnMain(doc);
      delete doc.paths['/pets'].post;
    }),
  );
  const { comparison } = await reviewOf(t, breakingOnMain);
  t.match(comparison.version, { needed: 'major', made: 'minor', enough: false });
});

t.test(
  '(f) a new deprecation whose sunset is already past: 410 from the deploy, so breaking; a later one is not',
  async (t) => {
    const { markdown, comparison } = await reviewOf(t, heads.pastSunset);
    t.ok(markdown.length < 60_000, 'one GitHub comment');
    t.match(comparison.version, { wire: 'major', needed: 'major', made: 'minor', enough: false });
    t.match(comparison.gate, { passed: false, breaking: 1 });
    const lines = markdown.split('\n');
    const start = lines.indexOf('#### `createPet` (POST /pets)');
    t.same(
      lines.slice(start + 2, start + 10),
      [
        '- **breaking**: Calls to POST /pets fail with 410 from the deploy on: its sunset `"2026-11-15T00:00:00Z"` is already past on 2026-11-29, the day judged, so no client gets time to move. (`api-deprecated-sunset-passed`)',
        '- warning: POST /pets is deprecated: stop calling it (it names no replacement) by its sunset `"2026-11-15T00:00:00Z"`. (`endpoint-deprecated`)',
        '- additive: Responses of POST /pets may now carry the `Deprecation` header of the `201` response. (`response-header-added`)',
        '- additive: Responses of POST /pets may now carry the `Sunset` header of the `201` response. (`response-header-added`)',
        '- additive: Responses of POST /pets may now carry the `Link` header of the `201` response. (`response-header-added`)',
        '- additive: Clients of POST /pets may now get a `410` answer (an error): handle it as one. (`response-non-success-status-added`)',
        '- none: The deprecation notes of POST /pets changed: `x-deprecated-at` is now `"2026-11-01T00:00:00Z"`. (`api-deprecation-details-changed`)',
        '- none: The deprecation notes of POST /pets changed: `x-deprecation-docs` is now `"/docs#/pets/createPet"`. (`api-deprecation-details-changed`)',
      ],
      'every line of the operation: the 410 with both dates, where to move, which detail changed',
    );
    t.match(markdown, /- deprecation: `not deprecated` → `deprecated, sunset 2026-11-15T00:00:00Z`\n/);
    // The client's method is only marked: it compiles, and its calls fail at the sunset, which has passed here.
    t.match(
      markdown,
      /- deprecated `PetStore\.createPet`: calls to it still compile, but fail with 410 once the service passes the operation's sunset/,
    );
    t.notMatch(markdown, /move it to the name its `@deprecated` note gives/, 'a method is not a renamed type');

    // Judged on the day before the sunset, the same pull request leaves clients their time.
    const before = await reviewed(['--base', main, '--head', heads.pastSunset, '--date', '2026-11-14', '--json']);
    t.match((JSON.parse(before.stdout) as Review).comparisons[0]?.version, { needed: 'minor', enough: true });

    const control = await reviewOf(t, heads.futureSunset);
    t.match(control.comparison.version, { needed: 'minor', made: 'minor', enough: true });
    t.match(control.comparison.gate, { passed: true, breaking: 0 });
    t.notMatch(control.markdown, /api-deprecated-sunset-passed/);
    t.match(
      control.markdown,
      '- warning: POST /pets is deprecated: stop calling it (it names no replacement) by its sunset `"2031-06-30T00:00:00Z"`. (`endpoint-deprecated`)',
    );
  },
);

t.test('--date: printed, passed to the diff, and the same date gives the same review', async (t) => {
  const head = specFile(editedSpec((doc) => delete doc.paths['/pets/{petId}']));
  const at = async (day: string) => reviewed(['--base', main, '--head', head, '--date', day]);
  const [first, again, later] = [await at('2030-12-04'), await at('2030-12-04'), await at('2030-12-05')];
  t.equal(again.stdout, first.stdout, 'the same review, run again');
  t.match(first.stdout, /- \*\*Date\*\*: 2030-12-04 /);
  t.match(first.stdout, /\*\*breaking\*\*: .*\(`api-removed-before-sunset`\)/);
  t.match(later.stdout, /warning: .*\(`api-removed-after-sunset`\)/);
  const today = await reviewed(['--base', main, '--head', main]);
  t.match(
    today.stdout,
    new RegExp(`- \\*\\*Date\\*\\*: ${new Date().toISOString().slice(0, 10)} `),
    'today (UTC) by default',
  );
});

const commands = {
  breaking: (args: string[]) => {
    const { io, output } = capture();
    // breaking's io writes whole lines; the capture keeps them apart.
    const status = runBreaking(args, {
      out: (text) => output.out(`${text}\n`),
      err: (text) => output.err(`${text}\n`),
    });
    return Promise.resolve({ status, ...io });
  },
  review: reviewed,
  changelog: (args: string[]) => {
    const { io, output } = capture();
    const status = runChangelog(args, output);
    return Promise.resolve({ status, ...io });
  },
};

/** A process's exit status and stderr, once it has ended. */
function ran(command: string, args: readonly string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (status) => {
      resolve({ status, stderr });
    });
  });
}

t.test('every contract command: an unknown, empty or stray option is the usage line and exit 2', async (t) => {
  for (const [name, run] of Object.entries(commands))
    for (const args of [
      ['--bse', main],
      ['--base', ''],
      ['--base='],
      ['--head', ' '],
      [''],
      ['--date', '2026-02-30'],
    ]) {
      const result = await run(args);
      t.equal(result.status, 2, `${name} ${JSON.stringify(args)}: exit 2`);
      t.match(result.stderr, new RegExp(`^contract ${name}: .+\\nusage: npm run contract -- ${name} \\[--base`), name);
      t.equal(result.stdout, '', 'nothing on stdout');
    }
  // As processes: what npm run prints and exits with, for the commands that run only as one; started at once,
  // as each mostly waits on its own start.
  const processes = [
    [['run', '--silent', 'contract', '--', 'review', '--bse', 'main'], 'review'],
    [['run', '--silent', 'contract', '--', 'breaking', '--base'], 'breaking'],
    [['run', '--silent', 'contract', '--', 'release', '--comit', 'HEAD'], 'release'],
    [['exec', '--', 'tsx', 'scripts/contract/version.ts', '--bse'], 'version'],
    [['run', '--silent', 'contract', '--', 'gate', '--bse'], 'gate'],
  ] as const;
  const results = await Promise.all(processes.map(([args]) => ran('npm', args)));
  for (const [index, [, name]] of processes.entries()) {
    const result = results[index]!;
    t.equal(result.status, 2, `${name}: exit 2`, { stderr: result.stderr });
    t.match(result.stderr, /usage: /, `${name}: the usage line`);
    t.notMatch(result.stderr, /^\s+at /m, `${name}: no stack trace`);
  }
});

t.test('a broken $ref names the file and the pointer where it is written, exit 2 (not 1)', async (t) => {
  const inOperation = specFile(
    editedSpec((doc) => {
      doc.paths['/pets'].post.requestBody.content['application/json'].schema = { $ref: '#/components/schemas/Nope' };
    }),
  );
  const inComponent = specFile(
    editedSpec((doc) => {
      doc.components.schemas.NewPet.properties.name = { $ref: '#/components/schemas/PetNam' };
    }),
  );
  for (const [name, run] of Object.entries(commands)) {
    const result = await run(['--base', main, '--head', inOperation]);
    t.equal(result.status, 2, `${name}: exit 2`);
    t.equal(
      result.stderr.split('\n')[0],
      `contract ${name}: ${inOperation}: $ref "#/components/schemas/Nope" at #/paths/~1pets/post/requestBody/content/application~1json/schema resolves to nothing`,
    );
  }
  const result = await commands.breaking(['--base', inComponent, '--head', main]);
  t.equal(result.status, 2);
  t.equal(
    result.stderr,
    `contract breaking: ${inComponent}: $ref "#/components/schemas/PetNam" at #/components/schemas/NewPet/properties/name resolves to nothing\n`,
    'inside a component: the component is where it is written',
  );
});
