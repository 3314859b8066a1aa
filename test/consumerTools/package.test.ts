import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { BrowserPage, chromiumPath } from '../helpers/browser.js';
import { blocksUnder } from '../../lib/markdown.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { scratchDir } from '../helpers/scratchSpace.js';
import { countPets, serveApp } from '../helpers/typescriptClient.js';

// The package as a consumer gets it: npm pack, installed into an empty folder, its README's first example
// run and type-checked there, and the same build driving the service from a page in headless Chromium.

const run = promisify(execFile);
const contentTypes: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript' };
const packageDir = join(repoRoot, 'clients/typescript');
const bin = (name: string) => join(repoRoot, 'node_modules/.bin', name);

/** The README's "First call" example, the js block under that heading (plain JavaScript, also valid TypeScript). */
function firstCallExample(): string {
  const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
  const block = blocksUnder(readme, 'First call').find(({ language }) => language === 'js');
  if (block === undefined) throw new Error('clients/typescript/README.md has no "First call" js block');
  return block.text;
}

interface PackReport {
  filename: string;
  size: number;
  unpackedSize: number;
}

/** `npm pack --json`'s report of the one package: npm 11 prints an array of reports, npm 12 an object keyed by name. */
function packReport(printed: unknown): PackReport {
  const report = Array.isArray(printed) ? printed[0] : Object.values(printed as Record<string, unknown>)[0];
  if (typeof (report as Partial<PackReport> | undefined)?.filename !== 'string')
    throw new Error(`npm pack --json printed no filename: ${JSON.stringify(printed).slice(0, 300)}`);
  return report as PackReport;
}

/** Packs the package and installs the tarball into a new folder; returns that folder. */
async function installPacked(t: Test): Promise<string> {
  const consumer = scratchDir('pets-consumer-');
  t.teardown(consumer.remove);
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', consumer.path], {
    cwd: packageDir,
    timeout: 120_000,
  });
  const packed = packReport(JSON.parse(stdout));
  t.comment(`npm pack: ${packed.filename}, ${packed.size} bytes packed, ${packed.unpackedSize} unpacked`);
  writeFileSync(join(consumer.path, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', `./${packed.filename}`], {
    cwd: consumer.path,
    timeout: 120_000,
  });
  return consumer.path;
}

// Packing builds the package (tsc): once for both tests, and one service for both, whose CORS_ORIGINS
// names the page's origin.
const consumer = await installPacked(t);
const page = await servePage(t, join(consumer, 'node_modules/pet-store-client'));
const served = await serveApp(t, { CORS_ORIGINS: page.origin });

t.test('npm pack installs into an empty folder, and the README example runs and type-checks', async (t) => {
  const installed = join(consumer, 'node_modules/pet-store-client');
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
  t.same(manifest['dependencies'], undefined, 'no runtime dependency');
  t.ok(existsSync(join(installed, 'dist/index.d.ts')), 'with its type declarations');

  writeFileSync(join(consumer, 'example.mjs'), firstCallExample());
  const { baseUrl, key, db } = served;
  const { stdout } = await run(process.execPath, ['example.mjs'], {
    cwd: consumer,
    env: { ...process.env, PETS_BASE_URL: baseUrl, PETS_API_KEY: key },
    timeout: 60_000,
  });
  t.match(stdout, /^added Rex as pet 1\n1 Rex\n/, 'it adds Rex and lists it');
  t.match(stdout, /422 idempotency_key_reused: .+ \(request [A-Za-z0-9._:-]+\)\n$/, 'and shows a typed error');
  t.equal(await countPets(db, 'Tom'), 1);

  // The example as TypeScript, against the packed declarations; misuse must fail to compile.
  writeFileSync(join(consumer, 'example.ts'), firstCallExample());
  writeFileSync(
    join(consumer, 'misuse.ts'),
    [
      "import { PetStore } from 'pet-store-client';",
      "const store = new PetStore({ baseUrl: 'https://api.petstore.example.com/v1', apiKey: 'k' });",
      '// @ts-expect-error categoryId is required',
      "await store.createPet({ name: 'Rex' });",
      '// @ts-expect-error no such status',
      "await store.listPets({ status: 'lost' });",
      '',
    ].join('\n'),
  );
  const tsc = await run(
    bin('tsc'),
    [
      // skipLibCheck: Node's own declarations cost 6 s of CPU to check; the example is still checked against them.
      ...['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext'],
      ...['--moduleResolution', 'nodenext'],
      ...['--types', 'node', '--typeRoots', join(repoRoot, 'node_modules/@types'), 'example.ts', 'misuse.ts'],
    ],
    { cwd: consumer, timeout: 120_000 },
  ).then(
    () => '',
    (error: unknown) => (error as { stdout: string }).stdout,
  );
  t.equal(tsc, '', 'the example compiles against the packed types, and misuse does not');
});

/**
 * Serves a page (set once the service's URL is known) and the installed package's files, from another
 * origin than the service's.
 */
async function servePage(t: Test, packageRoot: string): Promise<{ origin: string; setPage(html: string): void }> {
  const files = new Map<string, string>();
  for (const name of readdirSync(join(packageRoot, 'dist'), { recursive: true, encoding: 'utf8' }))
    if (name.endsWith('.js'))
      files.set(`/pet-store-client/${name}`, readFileSync(join(packageRoot, 'dist', name), 'utf8'));
  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    const body = files.get(path);
    response.writeHead(body === undefined ? 404 : 200, { 'content-type': contentTypes[extname(path)] ?? 'text/html' });
    response.end(body ?? '');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setPage: (html) => files.set('/', html),
  };
}

/** The page: the README's calls, their outcome in window.result. */
function pageUsing(baseUrl: string, key: string): string {
  return `<!doctype html><title>pet-store-client</title><script type="module">
    import { PetStore, PetStoreError } from '/pet-store-client/index.js';
    const store = new PetStore({ baseUrl: ${JSON.stringify(baseUrl)}, apiKey: ${JSON.stringify(key)} });
    try {
      const created = await store.createPet({ name: 'Browser-Rex', categoryId: 3 });
      const page = await store.listPets({ id: [created.id] });
      const all = [];
      for await (const pet of store.pets()) all.push(pet.id);
      const missing = await store.listPets({ limit: 0 }).catch((error) => error);
      window.result = {
        created,
        page,
        all,
        missing: { isError: missing instanceof PetStoreError, status: missing.status, requestId: missing.requestId },
      };
    } catch (error) {
      window.result = { failed: String(error) };
    }
  </script>`;
}

t.test(
  'in headless Chromium, the built package lists and creates pets against the service',
  { skip: existsSync(chromiumPath) ? false : `${chromiumPath} is absent (see scripts/ci-system-deps.sh)` },
  async (t) => {
    const page = await servePage(t, join(consumer, 'node_modules/pet-store-client'));
    const { baseUrl, key, db } = await serveApp(t, { CORS_ORIGINS: page.origin });
    page.setPage(pageUsing(baseUrl, key));
    const browser = await BrowserPage.open();
    t.teardown(browser.close);
    await browser.page.navigate(`${page.origin}/`);
    const result = (await browser.page.waitFor('window.result', 'the calls finishing')) as Record<string, any>;
    t.same(result['failed'], undefined, 'no call failed');
    t.match(result['created'], { name: 'Browser-Rex', categoryId: 3, status: 'available' }, 'created');
    t.same(result['page'], [result['created']], 'listed by id');
    const { rows } = await db.query<{ id: string }>({ text: 'SELECT id FROM pets ORDER BY id' });
    t.same(
      result['all'],
      rows.map((row) => Number(row.id)),
      'walked: every pet',
    );
    t.match(result['missing'], { isError: true, status: 400, requestId: /./ }, 'errors are typed, with the request id');
    t.equal(await countPets(db, 'Browser-Rex'), 1);
  },
);
