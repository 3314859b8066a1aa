import t from 'tap';
import { versionProblems } from '../../scripts/contract/version.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';

const spec = (version: string, paths: JsonObject = {}): JsonObject => ({
  openapi: '3.1.0',
  info: { title: 't', version },
  paths,
});
const released = spec('1.1.0', { '/pets': {} });
const deletePet = { '/pets': {}, '/pets/{petId}': { delete: { operationId: 'deletePet' } } };

t.test('the released contract as it stands needs nothing', async (t) => {
  t.same(versionProblems(spec('1.1.0', { '/pets': {} }), released, ''), []);
});

t.test('a change under the released version is refused', async (t) => {
  t.match(versionProblems(spec('1.1.0', deletePet), released, '## 1.1.0\n'), [/info.version is still 1\.1\.0/]);
});

t.test('a raised version needs its CHANGELOG section', async (t) => {
  t.match(versionProblems(spec('1.2.0', deletePet), released, '## 1.1.0\n'), [/no "## 1\.2\.0" section/]);
  t.same(versionProblems(spec('1.2.0', deletePet), released, '# Changelog\n\n## 1.2.0\n\nSummary\n'), []);
  t.match(versionProblems(spec('1.2.0', deletePet), released, '## 1.2.01\n'), [/no "## 1\.2\.0" section/]);
});

t.test('a version below the last release is refused', async (t) => {
  t.match(versionProblems(spec('1.0.9', deletePet), released, '## 1.0.9\n'), [/below the last release 1\.1\.0/]);
});
