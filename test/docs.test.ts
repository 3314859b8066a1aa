import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { releasedVersions } from '../lib/contract/released.js';
import t from 'tap';
import { parse } from 'yaml';
import { blockPattern } from '../lib/generatedBlocks.js';
import { anchors, blocksUnder, brokenLinks, links, proseWords } from '../lib/markdown.js';
import { repoRoot } from '../lib/repoRoot.js';
import { loadConfig } from '../src/config/load.js';
import { maxJsonDepth } from '../src/http/operations/jsonDepth.js';
import { pageTestFile } from './helpers/promtool.js';
import { scratchDir } from './helpers/scratchSpace.js';

// The docs as a reader meets them: links that lead somewhere, a README short enough to read, and the facts
// it states true (the contract version, the key recipe, the commands CI runs for it).

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const documents = [
  'README.md',
  'ARCHITECTURE.md',
  'CHANGELOG.md',
  'clients/typescript/README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

t.test('no relative link in the docs names a missing file or heading', async (t) => {
  const broken = brokenLinks(repoRoot, documents);
  t.same(
    broken.map(({ file, line, target, reason }) => `${file}:${line} ${target}: ${reason}`),
    [],
  );
});

t.test('the link check finds a missing file, a missing heading and a way out of the tree', async (t) => {
  const root = scratchDir('pets-docs-');
  t.teardown(root.remove);
  mkdirSync(join(root.path, 'docs'));
  writeFileSync(
    join(root.path, 'docs/guide.md'),
    '# Guide\n\n## Keys, and revoking them\n\n## Keys, and revoking them\n',
  );
  writeFileSync(
    join(root.path, 'README.md'),
    [
      '# Read me',
      '[fine](docs/guide.md) [fine](docs/guide.md#keys-and-revoking-them-1) [fine](#read-me) [fine](docs/)',
      '[web](https://example.com/nowhere.md) `[code](missing.md)` [missing](docs/gone.md)',
      '[bad anchor](docs/guide.md#keys) [outside](../elsewhere.md) <a href="docs/none.md">html</a>',
      '```md',
      '[in a block](missing.md)',
      '```',
      '',
    ].join('\n'),
  );
  const found = brokenLinks(root.path, ['README.md']).map(({ line, target }) => `${line} ${target}`);
  t.same(found, ['3 docs/gone.md', '4 docs/guide.md#keys', '4 ../elsewhere.md', '4 docs/none.md']);
});

t.test("headings make GitHub's anchors; code blocks know their heading", async (t) => {
  t.same(
    [...anchors('# Node.js lines\n## The `npm test` time, measured\n# Node.js lines\n```\n# not a heading\n```\n')],
    ['nodejs-lines', 'the-npm-test-time-measured', 'nodejs-lines-1'],
  );
  const blocks = blocksUnder('## Install\n\n```sh\nnpm i\n```\n## Run\n````ts\n// a.mts\n```\n````\n', 'Run');
  t.same(blocks, [{ language: 'ts', text: '// a.mts\n```\n', heading: 'Run', line: 7 }]);
  t.same(links('[a](b.md) `[c](d.md)`\n```\n[e](f.md)\n```\n'), [{ target: 'b.md', line: 1 }]);
});

t.test('the README is a front door: at most 800 words outside code, no clock times or dates', async (t) => {
  const words = proseWords(readme);
  t.ok(words <= 800, `${words} words outside code blocks`);
  const prose = readme.replace(/^```[\s\S]*?^```/gm, '');
  t.same(prose.match(/\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:UTC|[ap]m)?\b(?!\d)/gi) ?? [], [], 'no clock time');
  t.same(prose.match(/\b\d{4}-\d{2}-\d{2}\b/g) ?? [], [], 'no date: dated figures live in docs/');
});

t.test(
  "the README states openapi.yaml's version and whether it is released (npm run generate writes it)",
  async (t) => {
    const { version } = (parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8')) as { info: { version: string } })
      .info;
    const stated = [...readme.matchAll(/<!-- info\.version -->([^<]*)<!-- \/info\.version -->/g)].map((m) => m[1]);
    t.same(stated, [releasedVersions().includes(version) ? version : `${version}, not yet released`]);
  },
);

t.test("the README's recipe for BOOTSTRAP_API_KEY makes a key the configuration accepts", async (t) => {
  const script = blocksUnder(readme, 'On PostgreSQL')
    .map(({ text }) => text)
    .join('');
  const recipe = /BOOTSTRAP_API_KEY=\$\((.+)\)\s*$/m.exec(script)?.[1];
  if (recipe === undefined) return t.fail('no BOOTSTRAP_API_KEY=$(...) under "On PostgreSQL"');
  const keys = [0, 1].map(() => execFileSync('bash', ['-c', recipe], { encoding: 'utf8' }).trim());
  t.not(keys[0], keys[1], 'a new key each time');
  for (const key of keys) t.equal(loadConfig({ BOOTSTRAP_API_KEY: key }).BOOTSTRAP_API_KEY, key, key);
});

t.test('the quick start is what scripts/ci-fresh-install.sh runs on npm 12', async (t) => {
  const quickStart = blocksUnder(readme, 'Quick start').map(({ text }) => text);
  t.match(quickStart[0], /^npm ci && npm start\s/, 'the two commands');
  t.ok(
    quickStart.some((text) => text.includes('curl -H "Authorization: Bearer $KEY" http://127.0.0.1:3000/v1/pets')),
    'the first request, with the printed key',
  );
  // The script and what it sources to start the service.
  const ci = ['scripts/ci-fresh-install.sh', 'scripts/ci-node-and-service.sh']
    .map((script) => readFileSync(join(repoRoot, script), 'utf8'))
    .join('\n');
  t.match(ci, /\. "\$repo\/scripts\/ci-node-and-service.sh"/, 'ci-fresh-install.sh sources ci-node-and-service.sh');
  for (const step of ['npm ci ', 'setsid npm start', "grep -oE 'pets_", '-H "Authorization: Bearer $key"', '/v1/pets"'])
    t.ok(ci.includes(step), `ci-fresh-install.sh: ${step}`);
});

// Each document serves one reader, says so at once, and states today's truth in a bounded number of words.
const readers = ['the API consumer', 'the operator', 'the contract reviewer', 'the contributor'] as const;
const docsFolder = documents.filter((file) => file.startsWith('docs/'));
const text = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

/**
 * Words of prose a person writes: outside fenced code blocks, table rows and the blocks `npm run generate`
 * writes from the spec (lib/generatedBlocks.ts), whose size follows the spec, not the writer.
 */
function narrativeWords(markdown: string): number {
  return proseWords(
    markdown
      .replace(blockPattern(String.raw`[\w.-]+`, true), '')
      .split('\n')
      .filter((line) => !/^\s*\|/.test(line))
      .join('\n'),
  );
}

/** The reader named in the first two lines (an HTML comment line, such as a generated file's, aside). */
function readerOf(markdown: string): string | undefined {
  const lines = markdown.split('\n').filter((line) => !/^<!--.*-->\s*$/.test(line));
  for (const line of lines.slice(0, 2)) {
    const named = new RegExp(`^For (${readers.join('|')}): \\S.{20,}`).exec(line);
    if (named !== null) return named[1];
  }
  return undefined;
}

/** References a reader cannot follow: our tracker's issues and pull requests, and our work sessions. */
const trackerReference = new RegExp(
  [
    String.raw`\b(?:issues?|pull requests?|PR) #?\d+\b`,
    String.raw`(?:^|(?<=[\s(]))#\d+\b`,
    String.raw`\b(?:this|that|our|last|previous|next|the same) (?:session|stop)\b`,
    String.raw`\b(?:session|stop) \d+\b`,
  ].join('|'),
  'gim',
);

function trackerReferencesIn(markdown: string): string[] {
  return [...markdown.matchAll(trackerReference)].map((match) => match[0]);
}

t.test('docs/ holds at most 16,000 words of prose, docs/performance.md at most 2,500', async (t) => {
  const counts = Object.fromEntries(docsFolder.map((file) => [file, narrativeWords(text(file))]));
  const total = Object.values(counts).reduce((sum, words) => sum + words, 0);
  t.ok(total <= 16_000, `${total} words of prose in docs/: ${JSON.stringify(counts)}`);
  t.ok((counts['docs/performance.md'] ?? 0) <= 2_500, `docs/performance.md: ${counts['docs/performance.md']} words`);
  t.equal(
    narrativeWords('# A\n\nOne two three.\n\n| x | y |\n|---|---|\n| four | five |\n\n```sh\nsix seven\n```\n'),
    4,
  );
  const generated =
    '<!-- BEGIN generated: codes -->\nEight words the spec wrote, not a person.\n<!-- END generated: codes -->';
  t.equal(narrativeWords(`# A\n\nOne two three.\n\n${generated}\n\nFour.\n`), 5, 'a generated block counts nothing');
  t.equal(narrativeWords(`  ${generated.replaceAll('\n', '\n  ')}\nOne.\n`), 1, 'an indented block neither');
});

t.test('each document names its reader in its first two lines; the README routes every reader', async (t) => {
  const readme = text('README.md');
  const routes = readme.slice(
    readme.indexOf('## Documentation'),
    readme.indexOf('\n## ', readme.indexOf('## Documentation') + 1),
  );
  for (const file of [...docsFolder, 'ARCHITECTURE.md']) {
    const reader = readerOf(text(file));
    t.ok(reader, `${file}: no "For <reader>: <what it answers>" line among its first two (${readers.join(', ')})`);
    t.ok(routes.includes(`](${file})`), `${file}: not linked from the README's documentation table`);
  }
  for (const reader of readers)
    t.ok(routes.includes(reader.replace('the ', 'an ').replace('an contr', 'a contr')), `the README routes ${reader}`);
  t.equal(readerOf('# T\nFor the operator: what to set before the first deploy.\n'), 'the operator');
  t.equal(
    readerOf('<!-- generated -->\n# T\nFor the contributor: how the bench measures a request.\n'),
    'the contributor',
  );
  t.equal(
    readerOf('# T\n\nFor the operator: what to set before the first deploy.\n'),
    undefined,
    'only the first two lines',
  );
  t.equal(readerOf('# T\nFor everyone: what to set before the first deploy.\n'), undefined, 'a reader we know');
});

t.test('no document refers to our tracker or our work sessions', async (t) => {
  for (const file of [...docsFolder, 'README.md', 'ARCHITECTURE.md']) t.same(trackerReferencesIn(text(file)), [], file);
  t.same(trackerReferencesIn('Fixed in issue 28 (see issues #37 and PR 4); this session, stop 2. #12'), [
    'issue 28',
    'issues #37',
    'PR 4',
    'this session',
    'stop 2',
    '#12',
  ]);
  t.same(trackerReferencesIn('PostgreSQL sessions; session pooling; podman stop; SIGSTOP; `#/pets/getPet`'), []);
});

t.test("the client README's error cases give each code the status the spec answers it with", async (t) => {
  const { parse } = await import('yaml');
  const spec = parse(readFileSync(join(repoRoot, 'openapi.yaml'), 'utf8')) as {
    components: {
      responses: Record<string, { content?: Record<string, { example?: { code?: string; status?: number } }> }>;
    };
  };
  const statusOf = new Map<string, number>();
  for (const response of Object.values(spec.components.responses)) {
    const example = response.content?.['application/json']?.example;
    if (example?.code && example.status) statusOf.set(example.code, example.status);
  }
  const clientReadme = readFileSync(join(repoRoot, 'clients/typescript/README.md'), 'utf8');
  const cases = [...clientReadme.matchAll(/case (\d{3}): \/\/ (.*)/g)];
  t.ok(cases.length > 0, 'the README shows error cases');
  for (const [, status, comment] of cases)
    for (const [code] of (comment ?? '').matchAll(/[a-z]+(?:_[a-z]+)+/g))
      if (statusOf.has(code)) t.equal(statusOf.get(code), Number(status), `${code} under case ${status}`);
});

t.test(
  'the README shows the apikey command whose JSON output the CLI test parses, and a curl that creates a pet',
  (t) => {
    t.match(readme, /`npm run --silent apikey -- list \[--json\]`/);
    t.match(readme, /curl [^`]*-d '\{"name":"Rex","categoryId":3\}' http:\/\/127\.0\.0\.1:3000\/v1\/pets/);
    t.end();
  },
);

t.test('docs/api.md states the depth a body may nest to, as the parser enforces it', (t) => {
  t.match(text('docs/api.md'), `nest at most ${maxJsonDepth} deep in a body`);
  t.end();
});

t.test("the bootstrap key's rule is stated once, in configuration.md (from the config schema); others link", (t) => {
  const rule = /\d+\+? (?:or more )?(?:random |different )?characters|10\^\d+ guesses|different ones/;
  for (const file of documents.filter((name) => !['docs/configuration.md', 'CHANGELOG.md'].includes(name)))
    for (const paragraph of text(file).split(/\n\s*\n/))
      if (paragraph.includes('BOOTSTRAP_API_KEY')) t.notMatch(paragraph, rule, `${file}: ${paragraph.slice(0, 60)}`);
  t.match(text('docs/configuration.md'), /`BOOTSTRAP_API_KEY` .*32 or more .*10\^30 guesses/);
  t.end();
});

t.test("the gate's steps in docs/contract.md are the npm scripts scripts/contract-gate.sh runs", (t) => {
  const steps = [...text('scripts/contract-gate.sh').matchAll(/^npm run --silent (\S+)/gm)].map(
    ([, script]) => script ?? '',
  );
  const documented = blocksUnder(text('docs/contract.md'), 'Running the gate')
    .map((block) => block.text)
    .join('\n');
  t.ok(steps.includes('check:migrations'), 'the gate runs check:migrations');
  for (const script of new Set(steps)) t.match(documented, `npm run ${script}`, script);
  t.end();
});

t.test('one command runs Respect in every document: npx @redocly/cli respect', (t) => {
  for (const file of documents) t.notMatch(text(file), /npx redocly respect/, file);
  t.match(text('docs/api.md'), 'npx @redocly/cli respect');
  t.end();
});

t.test("docs/development.md's promtool command runs the shipped rule tests npm test runs", (t) => {
  const quick = readdirSync(join(repoRoot, 'deploy/prometheus'))
    .filter((file) => file.endsWith('.test.yml') && file !== pageTestFile)
    .sort();
  t.match(text('docs/development.md'), `\`promtool test rules ${quick.join(' ')}\``);
  t.end();
});

t.test('the client README states no sizes that drift: it says how to measure them', (t) => {
  t.notMatch(text('clients/typescript/README.md'), /\d+(?:\.\d+)? ?kB/);
  t.end();
});

t.test('no issue number in what a user reads: source, scripts and their output', (t) => {
  const sourceFiles = (folder: string): string[] =>
    readdirSync(join(repoRoot, folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.(?:ts|sh|js)$/.test(file) && !file.includes('generated'))
      .map((file) => `${folder}/${file}`);
  // Only numbers: "this session" is PostgreSQL's word in code.
  const issueNumber = /\b(?:issues?|pull requests?|PR) #?\d+\b/gi;
  for (const file of ['src', 'lib', 'scripts', 'generators'].flatMap(sourceFiles))
    t.same(text(file).match(issueNumber) ?? [], [], file);
  t.end();
});
