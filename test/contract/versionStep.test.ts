// The version step judged for two audiences (scripts/contract/versionStep.ts): the wire, and the source of the
// generated TypeScript client. Each head is a programmatic edit of a copy of openapi.yaml carrying a schema of the
// test's own, under a version of the test's own; the clients are generated and compiled once, in one program (so the
// gate's check, which compiles what it has not seen, finds them made).
import t from 'tap';
import { parse, stringify } from 'yaml';
import { refusals } from '../../lib/constructs/refusals.js';
import { diff } from '../../lib/contract/diff.js';
import { parseContract } from '../../lib/contract/load.js';
import { clientsOf, compareClients, type ClientChanges } from '../../scripts/contract/clientDeclarations.js';
import { clientLines } from '../../scripts/contract/clientLines.js';
import { stepProblems } from '../../scripts/contract/version.js';
import { versionStep } from '../../scripts/contract/versionStep.js';
import { freeSuffix, mainText } from './pullRequests.js';

// Fixtures are edited by path; typing every edit would bury the change under test.
type Doc = any;
const mainDoc = parse(mainText) as Doc;
const suffix = freeSuffix((s) =>
  [`Tag${s}`, `Label${s}`, `Mark${s}`].some((name) => name in mainDoc.components.schemas),
);
const [tag, label, mark] = [`Tag${suffix}`, `Label${suffix}`, `Mark${suffix}`];
const tagSchema = { description: 'A word filed with an animal.', type: 'string', minLength: 1, maxLength: 40 };
const date = '2026-11-29';

/** The copy with `tag` as a schema, at `version`, edited by `edit`. */
function contract(version: string, edit: (doc: Doc) => void = () => {}) {
  const doc = parse(mainText, { intAsBigInt: true }) as Doc;
  doc.info.version = version;
  doc.components.schemas[tag] = tagSchema;
  edit(doc);
  const text = stringify(doc);
  return { document: parseContract(text, `${version}.yaml`), text };
}
const renamed = (doc: Doc) => {
  delete doc.components.schemas[tag];
  doc.components.schemas[label] = tagSchema;
};
const aliased = (doc: Doc) => {
  renamed(doc);
  doc.components.schemas[tag] = { $ref: `#/components/schemas/${label}` };
};
const added = (doc: Doc) => {
  doc.components.schemas[mark] = tagSchema;
};
/** An operationId with a suffix: its method renamed (not listPets, whose page size the generator reads by name). */
const operationRenamed = (doc: Doc) => {
  const items = Object.values<Record<string, { operationId?: string } | null>>(doc.paths);
  const operation = items
    .flatMap((item) => Object.values(item))
    .find((value) => value?.operationId !== undefined && value.operationId !== 'listPets');
  if (!operation) throw new Error('the spec has no operation but listPets');
  operation.operationId = `${operation.operationId ?? ''}Again`;
};

const base = contract('5.0.0');
const heads = {
  renamed: contract('5.0.1', renamed),
  aliased: contract('5.0.1', aliased),
  added: contract('5.0.1', added),
  operationRenamed: contract('5.1.0', operationRenamed),
  renamedMajor: contract('6.0.0', renamed),
  aliasedMinor: contract('5.1.0', aliased),
};
const clients = await clientsOf([base, ...Object.values(heads)]);
const clientOf = (head: keyof typeof heads) =>
  compareClients(clients[0]!, clients[Object.keys(heads).indexOf(head) + 1]!);
const stepOf = (head: keyof typeof heads) =>
  versionStep('5.0.0', '5.0.1', diff(base.document, heads[head].document, { today: date }), clientOf(head));

t.test('a schema renamed without an alias: the wire is unchanged, the source needs a major step', async (t) => {
  t.match(stepOf('renamed'), { wire: 'patch', source: 'major', needed: 'major', made: 'patch', enough: false });
  const client = clientOf('renamed');
  t.same(
    client.removed.map(({ name, level }) => [name, level]),
    [[tag, 'breaking']],
  );
  const lines = clientLines({
    ...client,
    removed: [{ ...client.removed[0]!, schema: true }],
    added: client.added.map((c) => ({ ...c, schema: true })),
  });
  t.match(
    lines[0],
    `- **breaking**: the type \`${tag}\` is gone, so code that names it stops compiling; \`${label}\` is the same: use it instead. If only the schema was renamed, keeping \`${tag}\` in \`components/schemas\` as a schema that is only a \`$ref\` to \`${label}\` keeps this name in the client (no major step).`,
  );
});

t.test('the gate refuses that rename unless the major number moves', async (t) => {
  const problems = await stepProblems(heads.renamed, base, date);
  t.match(problems, [
    new RegExp(
      `5\\.0\\.0 -> 5\\.0\\.1 is a patch step, but the changes need a major one: the wire a patch, the client's source a major \\(gone from the client: ${tag}\\)`,
    ),
  ]);
  t.same(await stepProblems(heads.renamedMajor, base, date), [], 'a major step is enough');
});

t.test('a schema renamed keeping the old name as a bare $ref: the client keeps the type, no major step', async (t) => {
  t.same(refusals(parse(heads.aliased.text) as Doc), [], 'no machine refuses a schema that is only a $ref');
  t.match(stepOf('aliased'), { source: 'minor', needed: 'minor' }, 'the new name is an addition');
  t.same(clientOf('aliased').removed, []);
  const former = clientOf('aliased').changed.find(({ name }) => name === tag);
  t.equal(former?.after, `@deprecated type ${tag} = string`, 'the former name is marked @deprecated');
  const lines = clientLines(clientOf('aliased')).join('\n');
  t.match(lines, `- additive: a new type \`${label}\`: \`type ${label} = string\``);
  t.match(
    lines,
    `- deprecated \`${tag}\`: code that names it still compiles; move it to the name its \`@deprecated\` note gives.`,
  );
  t.same(await stepProblems(heads.aliasedMinor, base, date), []);
});

t.test('an operationId renamed: the method is gone, a major step on both counts', async (t) => {
  const step = versionStep(
    '5.0.0',
    '5.1.0',
    diff(base.document, heads.operationRenamed.document, { today: date }),
    clientOf('operationRenamed'),
  );
  t.match(step, { wire: 'major', source: 'major', needed: 'major', enough: false });
  const lines = clientLines(clientOf('operationRenamed')).join('\n');
  t.match(
    lines,
    /- \*\*breaking\*\*: the method `PetStore\.(\w+)` is gone, so calls to it stop compiling; `PetStore\.\1Again` takes and answers the same: call it instead\./,
  );
});

t.test('a schema added: none on the wire, a new type in the client, so a minor step', async (t) => {
  t.match(stepOf('added'), { wire: 'patch', source: 'minor', needed: 'minor', enough: false });
  t.same(
    clientOf('added').added.map(({ name, level }) => [name, level]),
    [[mark, 'additive']],
  );
  t.match(await stepProblems(heads.added, base, date), [
    /need a minor one: the wire a patch, the client's source a minor\./,
  ]);
});

t.test('the source step from the levels alone', async (t) => {
  const none: ClientChanges = { refused: {}, added: [], removed: [], changed: [] };
  const step = (client: ClientChanges) => versionStep('5.0.0', '5.0.0', [], client).source;
  t.equal(step(none), 'none');
  t.equal(step({ ...none, changed: [{ name: 'Pet', level: 'none', before: 'a', after: 'b' }] }), 'patch');
  t.equal(step({ ...none, added: [{ name: 'Pet', level: 'additive', after: 'a' }] }), 'minor');
  t.equal(step({ ...none, removed: [{ name: 'Pet', level: 'breaking', before: 'a' }] }), 'major');
  t.equal(
    step({ ...none, refused: { head: 'no' }, removed: [{ name: 'Pet', level: 'breaking' }] }),
    'none',
    'the generator refusing is judged by the gate first',
  );
});

t.test(
  'one contract compiled in two programs: no declaration differs (symbol-keyed members named as code names them)',
  async (t) => {
    const [apart] = await clientsOf([{ ...base, text: `${base.text}\n` }]);
    const client = compareClients(clients[0]!, apart!);
    t.same([...client.removed, ...client.added, ...client.changed], []);
  },
);
