import t from 'tap';
import { summaryPlaceholder, withUnreleasedSection } from '../../lib/contract/changelogSection.js';
import { versionProblems } from '../../scripts/contract/version.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';

const spec = (version: string, paths: JsonObject = {}): JsonObject => ({
  openapi: '3.1.0',
  info: { title: 't', version },
  paths,
});
const released = spec('1.1.0', { '/pets': {} });
const deletePet = { '/pets': {}, '/pets/{petId}': { delete: { operationId: 'deletePet', responses: {} } } };
const intro = '# Changelog\n\nChanges.\n\n## 1.1.0\n\nHistory.\n';

t.test('the released contract as it stands needs nothing', async (t) => {
  t.same(versionProblems(spec('1.1.0', { '/pets': {} }), released, ''), []);
});

t.test('a change under the released version is refused', async (t) => {
  t.match(versionProblems(spec('1.1.0', deletePet), released, '## 1.1.0\n'), [/info.version is still 1\.1\.0/]);
});

t.test('a raised version needs its CHANGELOG section, generated entries and a summary', async (t) => {
  const next = spec('1.2.0', deletePet);
  t.match(versionProblems(next, released, intro), [/no "## 1\.2\.0" section/]);
  t.match(versionProblems(next, released, '## 1.2.01\n'), [/no "## 1\.2\.0" section/]);

  const generated = withUnreleasedSection(intro, released, next);
  t.match(generated, /^## 1\.2\.0 \(unreleased\)\n\nSummary: \(to write/m, 'npm run generate opens the section');
  t.match(generated, /<!-- BEGIN generated: changes in 1\.2\.0 -->\nChanges to the contract since 1\.1\.0\./);
  t.match(generated, /- Added `DELETE \/pets\/\{petId\}` \(deletePet\)\./);
  t.ok(generated.indexOf('## 1.2.0') < generated.indexOf('## 1.1.0'), 'newest first');
  t.match(versionProblems(next, released, generated), [/has no summary/], 'the placeholder is not a summary');

  const written = generated.replace(summaryPlaceholder, 'Pets can be deleted.');
  t.same(versionProblems(next, released, written), []);
  t.equal(withUnreleasedSection(written, released, next), written, 'generating again changes nothing');

  const withoutEntry = written.replace(/^- Added `DELETE.*\n/m, '');
  t.match(versionProblems(next, released, withoutEntry), [/entries are not what changed since 1\.1\.0/]);
  t.equal(withUnreleasedSection(withoutEntry, released, next), written, 'npm run generate puts the entry back');
});

t.test('a hand-written section gains its generated entries and keeps its summary', async (t) => {
  const handWritten = intro.replace('## 1.1.0', '## 1.2.0\n\nPets can be deleted.\n\n## 1.1.0');
  const generated = withUnreleasedSection(handWritten, released, spec('1.2.0', deletePet));
  t.match(generated, /^## 1\.2\.0 \(unreleased\)\n\nPets can be deleted\.\n\n<!-- BEGIN generated/m);
  t.match(generated, /## 1\.1\.0\n\nHistory\.\n$/, 'the released section is left as it was');
});

t.test('a version below the last release is refused', async (t) => {
  t.match(versionProblems(spec('1.0.9', deletePet), released, '## 1.0.9\n'), [/below the last release 1\.1\.0/]);
});
