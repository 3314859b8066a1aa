// npm run contract -- review: what a change does to consumers, for a pull-request comment.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, stringify } from 'yaml';
import { parseContract } from '../../lib/contract/load.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { review, reviewMarkdown, runReview } from '../../scripts/contract/review.js';
import { scratchDir } from '../helpers/scratchSpace.js';

const specText = readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8');
// Fixtures are edited by path; typing every edit would bury the change under test.
type Doc = any;
const edited = (edit: (doc: Doc) => void) => {
  const doc = parse(specText, { intAsBigInt: true }) as Doc;
  edit(doc);
  return stringify(doc);
};
const reviewOf = (edit: (doc: Doc) => void) =>
  review(
    { document: parseContract(specText, 'base.yaml'), source: 'base.yaml' },
    { document: parseContract(edited(edit), 'head.yaml'), source: 'head.yaml' },
  );

t.test('a removed operation: major step needed, the client loses its methods, the gate fails', async (t) => {
  const report = reviewOf((doc) => {
    delete doc.paths['/pets'].post;
  });
  t.match(report.version, { needed: 'major', made: 'none', enough: false });
  t.match(report.gate, { passed: false, breaking: 1 });
  t.ok(
    report.client.removed.some((signature) => signature.startsWith('createPet(')),
    'createPet removed',
  );
  t.ok(report.client.typesRemoved.includes('CreatePetOptions'));
  t.match(
    report.scopes.find((row) => row.operation === 'createPet'),
    { before: 'bearerAuth [pets:write]', after: 'absent' },
  );
  const markdown = reviewMarkdown(report);
  t.match(markdown, /\*\*Gate\*\* \(`npm run contract -- breaking`\): \*\*fails\*\*: 1 breaking change/);
  t.match(
    markdown,
    /#### `createPet` \(POST \/pets\)\n\n\| level \| rule \| change \| pointer \|\n\|---\|---\|---\|---\|\n\| \*\*breaking\*\* \| `api-removed-without-deprecation` \|/,
  );
  t.match(markdown, /- \*\*removed\*\*: `createPet\(/);
  t.match(
    markdown,
    /#### Operations\n\n- Removed `POST \/pets` \(createPet\)\. \(breaking: `api-removed-without-deprecation`\)/,
  );
});

t.test('scopes, objectives, deprecations and client signatures before and after', async (t) => {
  const report = reviewOf((doc) => {
    doc.paths['/pets'].get.security = [{ bearerAuth: ['pets:read', 'pets:list'] }];
    doc.paths['/pets'].get['x-slo'].availability = 99.5;
    doc.paths['/pets'].post.deprecated = true;
    doc.paths['/pets'].post['x-sunset'] = '2031-01-01T00:00:00Z';
    doc.paths['/pets'].post.parameters.push({
      name: 'X-Tenant',
      in: 'header',
      required: true,
      schema: { type: 'string' },
    });
  });
  t.match(
    report.scopes.find((row) => row.operation === 'listPets'),
    {
      before: 'bearerAuth [pets:read]',
      after: 'bearerAuth [pets:read, pets:list]',
    },
  );
  t.match(
    report.objectives.find((row) => row.operation === 'listPets'),
    { before: /"availability":99\.9/, after: /"availability":99\.5/ },
  );
  t.match(
    report.deprecations.find((row) => row.operation === 'createPet'),
    {
      before: 'not deprecated',
      after: 'deprecated, sunset 2031-01-01T00:00:00Z',
    },
  );
  const createPet = report.client.changed.find(({ before }) => before.startsWith('createPet('));
  t.ok(createPet, 'createPet changed signature', { client: report.client });
  t.match(createPet?.after, /^@deprecated createPet\(/);
  const markdown = reviewMarkdown(report);
  t.match(markdown, /\| `listPets` \(changed\) \| bearerAuth \[pets:read\] \| bearerAuth \[pets:read, pets:list\] \|/);
  t.match(markdown, /`api-security-scope-added`/);
});

t.test('an additive change in an unchanged version: a minor step needed, not taken', async (t) => {
  const report = reviewOf((doc) => {
    doc.components.schemas.Pet.properties.nickname = { type: 'string' };
  });
  t.match(report.version, { needed: 'minor', made: 'none', enough: false });
  t.match(reviewMarkdown(report), /need a minor release .*: \*\*not enough\*\*/);
});

t.test('the command: review --base <file> --json, then Markdown; a missing ref is exit 2, end to end', async (t) => {
  const dir = scratchDir('pets-review-');
  t.teardown(() => {
    dir.remove();
  });
  const base = join(dir.path, 'base.yaml');
  writeFileSync(
    base,
    edited((doc) => {
      doc.paths['/pets'].get.parameters.splice(2, 1);
    }),
  );
  // In this process, as the entry point calls it; one run as a process shows its exit code and stderr.
  const run = (args: string[]) => {
    let stdout = '';
    let stderr = '';
    const status = runReview(args, { out: (text) => (stdout += text), err: (text) => (stderr += text) });
    return { status, stdout, stderr };
  };
  const result = run(['--base', base, '--json']);
  t.equal(result.status, 0, 'the report is not a verdict', { stderr: result.stderr });
  const report = JSON.parse(result.stdout) as { changes: Array<{ rule: string }>; head: { source: string } };
  t.ok(report.changes.some((change) => change.rule === 'new-optional-request-parameter'));
  t.equal(report.head.source, 'openapi.yaml');
  const markdown = run(['--base', base]);
  t.match(markdown.stdout, /^## Contract review: `openapi\.yaml`/);
  const missing = spawnSync('npm', ['run', '--silent', 'contract', '--', 'review', '--base', 'no-such-ref-54'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  t.equal(missing.status, 2);
  t.equal(missing.stderr, 'contract review: no-such-ref-54: neither a file nor a git revision that has openapi.yaml\n');
  t.equal(missing.stdout, '');
});
