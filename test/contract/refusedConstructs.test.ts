// The contract commands refuse a head using a construct docs/constructs.md refuses for the gate and review, one
// family each (an allOf split, a $ref with keywords beside it, servers on a path item): exit 2 with npm run
// generate's report (the construct, where, its row) and nothing on stdout, --json or not; a base holding one is
// compared all the same, the construct named on stderr (lib/contract/readable.ts).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { refusals } from '../../lib/constructs/refusals.js';
import { releasedFile, releasedVersions } from '../../lib/contract/released.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { runBreaking } from '../../scripts/contract/breaking.js';
import { runChangelog } from '../../scripts/contract/changelog.js';
import { runReview } from '../../scripts/contract/review.js';
import { scratchDir } from '../helpers/scratchSpace.js';

const dir = scratchDir('pets-refused-constructs-');
t.teardown(() => {
  dir.remove();
});
const specText = readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8');
const release = releasedFile(releasedVersions().at(-1)!);
// Fixtures are edited by path; typing every edit would bury the construct under test.
type Doc = any;

/** openapi.yaml with one edit, written as `name`.yaml in the scratch folder. */
function head(name: string, edit: (doc: Doc) => void): string {
  const doc = parse(specText, { intAsBigInt: true }) as Doc;
  edit(doc);
  const file = join(dir.path, `${name}.yaml`);
  writeFileSync(file, stringify(doc));
  return file;
}

const families: { id: string; file: string }[] = [
  {
    id: 'schema-all-of',
    // NewPet as two parts that together say what it says: the review read it as three properties no longer read.
    file: head('all-of-split', (doc) => {
      const { description, required, properties } = doc.components.schemas.NewPet;
      doc.components.schemas.NewPet = {
        description,
        allOf: [
          { type: 'object', required: [required[0]], properties: { name: properties.name } },
          {
            type: 'object',
            required: required.slice(1),
            properties: { categoryId: properties.categoryId, status: properties.status },
          },
        ],
      };
    }),
  },
  {
    id: 'schema-ref-siblings',
    file: head('ref-siblings', (doc) => {
      doc.components.schemas.NewPet.properties.name = { $ref: '#/components/schemas/PetName', maxLength: 50 };
    }),
  },
  {
    id: 'servers-path',
    file: head('path-servers', (doc) => {
      doc.paths['/pets/{petId}'].servers = [{ url: 'https://animals.petstore.example.com/v1' }];
    }),
  },
];

function captured() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (text: string) => out.push(text), err: (text: string) => err.push(text) } };
}

/** generate's lines for each construct the file uses: where it appears and the row to read. */
const constructLines = (file: string) =>
  refusals(parse(readFileSync(file, 'utf8')) as JsonObject, ['contract']).flatMap(({ id, at }) => [
    `- ${id} at ${at.map((pointer) => `#${pointer}`).join(', ')}`,
    `  read docs/constructs.md#${id}`,
  ]);

for (const { id, file } of families)
  t.test(`${id}: breaking, review and changelog refuse the head with generate's report`, async (t) => {
    const lines = constructLines(file);
    t.ok(
      lines.some((line) => line.startsWith(`- ${id} at #`)),
      `the catalogue finds ${id}`,
    );
    const commands: [string, (args: string[], io: ReturnType<typeof captured>['io']) => number | Promise<number>][] = [
      ['breaking', runBreaking],
      ['breaking --json', (args, io) => runBreaking([...args, '--json'], io)],
      ['review', (args, io) => runReview([...args, '--base', release], io)],
      ['review --json', (args, io) => runReview([...args, '--base', release, '--json'], io)],
      ['changelog', runChangelog],
    ];
    for (const [name, run] of commands) {
      const { out, err, io } = captured();
      const status = await run(['--head', file], io);
      t.equal(status, 2, `${name}: exit 2, input it cannot judge`);
      t.same(out, [], `${name}: nothing on stdout`);
      const message = err.join('');
      t.match(message, `${file} uses`, `${name}: names the spec`);
      for (const line of lines) t.match(message, line, `${name}: ${line.trim()}`);
    }
  });

t.test('the report is the one npm run generate gives for the same spec', async (t) => {
  const { file } = families[0]!;
  const generate = spawnSync('npx', ['--no-install', 'tsx', 'generators/constructs.ts', file, dir.path], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  t.equal(generate.status, 1, 'generate refuses it', { stderr: generate.stderr });
  const { err, io } = captured();
  runBreaking(['--head', file], io);
  const constructs = generate.stderr.split('\n').filter((line) => /^(- | {2}read )/.test(line));
  t.ok(constructs.length >= 2);
  for (const line of constructs) t.match(err.join('\n'), line, line);
});

t.test('a base using a refused construct is compared all the same, the construct named on stderr', async (t) => {
  // Releases 1.0.0 and 1.1.0 state a parameter's default, refused since (docs/constructs.md#schema-default).
  const old = releasedFile('1.0.0');
  t.ok(
    refusals(parse(readFileSync(old, 'utf8')) as JsonObject, ['contract']).some(({ id }) => id === 'schema-default'),
    'release 1.0.0 uses schema-default',
  );
  const { out, err, io } = captured();
  const status = runBreaking(['--base', old, '--date', '2026-12-02'], io);
  t.not(status, 2, 'judged, not refused');
  t.match(out.join('\n'), /^Comparing openapi\.yaml \(/, 'compared');
  t.match(err.join('\n'), '- schema-default at #/paths/~1pets/get/parameters/0/schema/default');
  t.match(err.join('\n'), 'compared all the same, as the base');
  const clean = captured();
  runBreaking(['--date', '2026-12-02'], clean.io);
  t.notMatch(clean.err.join('\n'), 'compared all the same', 'nothing said of a base that uses none');
});
