import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { listOperations, loadOpenApiDocument, parametersOf } from '../../src/openapi/document.js';
import { arazzoPath, specPath } from '../../src/openapi/files.js';
import { startAppWithoutDatabase, startTestApp } from '../helpers/app.js';
import { BrowserPage, chromiumFlags, chromiumPath } from '../helpers/browser.js';
import { scratchDir } from '../helpers/scratchSpace.js';

const checkedIn = parse(readFileSync(specPath, 'utf8')) as unknown;
const chromium = chromiumPath;
// An animal to look up by the path parameters' examples; a bound on how many are created for them.
const seedPet = { name: 'Rex', categoryId: 3 };
const maxSeededPets = 100;

// Integers as BigInts on both sides: JavaScript numbers would take the
// int64 bounds 9223372036854775807 and 9223372036854776000 for equal. JSON is
// YAML, so the yaml package reads both; JSON.parse checks the JSON is JSON.
const exactly = (text: string) => parse(text, { intAsBigInt: true }) as unknown;

t.test('the spec is published as checked in, without a key', async (t) => {
  const app = await startAppWithoutDatabase(t);
  const json = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  t.equal(json.statusCode, 200);
  t.match(json.headers['content-type'], /^application\/json/);
  t.doesNotThrow(() => JSON.parse(json.body) as unknown, 'openapi.json is JSON');
  t.strictSame(
    exactly(json.body),
    exactly(readFileSync(specPath, 'utf8')),
    'openapi.json is openapi.yaml, digit for digit',
  );
  t.match(json.body, /"maximum": 9223372036854775807\b/, "the int64 bounds' digits are there");
  const yaml = await app.inject({ method: 'GET', url: '/v1/openapi.yaml' });
  t.equal(yaml.statusCode, 200);
  t.match(yaml.headers['content-type'], /yaml/);
  t.equal(yaml.body, readFileSync(specPath, 'utf8'), 'openapi.yaml is the file byte for byte');
});

t.test('the Arazzo workflows are published beside the spec, without a key', async (t) => {
  const app = await startAppWithoutDatabase(t);
  const served = await app.inject({ method: 'GET', url: '/v1/pets.arazzo.yaml' });
  t.equal(served.statusCode, 200);
  t.match(served.headers['content-type'], /^application\/yaml/);
  t.equal(served.body, readFileSync(arazzoPath, 'utf8'), 'pets.arazzo.yaml is the file byte for byte');
  const source = (parse(served.body) as { sourceDescriptions: Array<{ name: string; url: string }> })
    .sourceDescriptions[0]!;
  t.equal(source.name, 'pets');
  const resolved = new URL(source.url, 'http://service/v1/pets.arazzo.yaml');
  const spec = await app.inject({ method: 'GET', url: resolved.pathname });
  t.equal(spec.statusCode, 200, `its source description ${source.url} resolves to ${resolved.pathname}, served`);
  t.equal(spec.body, readFileSync(specPath, 'utf8'));
});

t.test('the docs page offers this service first and no internal server', async (t) => {
  const app = await startAppWithoutDatabase(t);
  const pageSpec = (await app.inject({ method: 'GET', url: '/docs/json' })).json();
  const published = checkedIn as { servers: Array<{ url: string; 'x-internal'?: boolean }> };
  t.same(
    pageSpec.servers.map((server: { url: string }) => server.url),
    ['/v1', ...published.servers.filter((server) => server['x-internal'] !== true).map((server) => server.url)],
    "the page's own origin (a relative URL) first, then the public servers",
  );
  t.same({ ...pageSpec, servers: published.servers }, checkedIn, 'the rest is the published spec');
});

t.test('/docs loads nothing from another host', async (t) => {
  const app = await startAppWithoutDatabase(t);
  const page = await app.inject({ method: 'GET', url: '/docs' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-security-policy'], /default-src 'self'/, 'the browser is told to load only from here');
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
  t.ok(assets.length >= 4, `${assets.length} assets referenced`);
  for (const asset of assets) {
    t.notMatch(asset, /^(https?:)?\/\//, `${asset} is local`);
    const response = await app.inject({ method: 'GET', url: asset });
    t.equal(response.statusCode, 200, `${asset} is served`);
    if (asset.endsWith('initializer.js'))
      t.notMatch(response.body.replace(/^\s*\/\/.*$/gm, ''), /https?:\/\//, 'the initializer points nowhere else');
  }
});

t.test('the docs page answers as the rest of the service: headers, conditional requests, 404s', async (t) => {
  const app = await startAppWithoutDatabase(t);
  const page = await app.inject({ method: 'GET', url: '/docs/' });
  t.equal(page.statusCode, 200, 'GET /docs/');
  t.match(page.headers['content-type'], /^text\/html/);
  t.equal(page.headers['content-length'], String(Buffer.byteLength(page.body)), 'its length');
  t.ok(page.headers['x-request-id'], 'a request id, as every answer');
  t.equal(page.headers['x-content-type-options'], 'nosniff', 'and the security headers');

  const css = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' });
  t.equal(css.statusCode, 200);
  t.match(css.headers['content-type'], /^text\/css/);
  const etag = css.headers['etag'];
  t.ok(etag, 'a static file has an ETag');
  const again = await app.inject({
    method: 'GET',
    url: '/docs/static/swagger-ui.css',
    headers: { 'if-none-match': String(etag) },
  });
  t.equal(again.statusCode, 304, 'and If-None-Match with it gets a 304');
  t.equal(again.body, '', 'without a body');

  for (const url of ['/docs/static/missing.js', '/docs/nothing-here']) {
    const missing = await app.inject({ method: 'GET', url });
    t.equal(missing.statusCode, 404, `${url}: 404`);
    t.same(missing.json(), { code: 'not_found', message: `No route GET ${url}.`, status: 404 }, "the service's 404");
    t.ok(missing.headers['x-request-id'], 'with its request id');
  }
});

t.test(
  'headless Chromium shows the operations and the deprecation',
  {
    skip: existsSync(chromium)
      ? false
      : `${chromium} is absent (apt-get install -y chromium; see scripts/ci-system-deps.sh)`,
  },
  async (t) => {
    const app = await startAppWithoutDatabase(t);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const profile = scratchDir('pets-chromium-');
    t.teardown(profile.remove);
    const { stdout } = await promisify(execFile)(
      chromium,
      [...chromiumFlags(profile.path), '--virtual-time-budget=20000', '--dump-dom', `${address}/docs`],
      { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
    );
    for (const operationId of ['listPets', 'createPet', 'getPet']) {
      t.match(stdout, new RegExp(`opblock-summary-operation-id[^>]*>${operationId}<`), `${operationId} is shown`);
    }
    t.match(
      stdout,
      /class="opblock[^"]*\bopblock-deprecated\b[^"]*" id="operations-pets-getPet"/,
      'getPet is shown as deprecated',
    );
    t.match(stdout, /id="operations-pets-listPets"/);
    t.notMatch(stdout, /opblock-deprecated[^"]*" id="operations-pets-listPets"/, 'listPets is not');
    t.match(stdout, /Pet Store Service/, 'the spec loaded');
    const servers = [...stdout.matchAll(/<option value="([^"]*)"/g)].map((match) => match[1]);
    t.equal(servers[0], '/v1', `"Try it out" calls this service by default (servers offered: ${servers.join(', ')})`);
    t.notOk(
      servers.some((url) => /staging|127\.0\.0\.1:3000/.test(url ?? '')),
      'servers marked x-internal are not offered',
    );
    t.notMatch(stdout, /class="topbar"/, "no top bar showing the page's own spec URL");
  },
);

interface Opblock {
  operationId: string;
  /** The element Swagger UI shows the operation in. */
  selector: string;
}

/** Every operation of openapi.yaml, as the docs page shows it (one block per operation, under its first tag). */
function opblocks(): Opblock[] {
  const spec = loadOpenApiDocument();
  return listOperations(spec).map(({ operation }) => {
    const tag = (operation as { tags?: string[] }).tags?.[0] ?? 'default';
    return { operationId: operation.operationId, selector: `#operations-${tag}-${operation.operationId}` };
  });
}

/** The value "Try it out" fills a parameter in with: its example, or the first of its named examples. */
function filledIn(parameter: object): unknown {
  const { example, examples } = parameter as { example?: unknown; examples?: Record<string, { value?: unknown }> };
  return example ?? Object.values(examples ?? {})[0]?.value;
}

/** The largest integer a path parameter is filled in with: the store must hold an animal with that id. */
function largestPathExample(): number {
  const spec = loadOpenApiDocument();
  const examples = listOperations(spec).flatMap(({ operation }) =>
    parametersOf(spec, operation)
      .filter((parameter) => parameter.in === 'path' && typeof filledIn(parameter) === 'number')
      .map((parameter) => filledIn(parameter) as number),
  );
  return Math.max(0, ...examples);
}

t.test(
  '"Try it out" of every operation, executed as the page fills it in, succeeds',
  { skip: existsSync(chromiumPath) ? false : `${chromiumPath} is absent (see scripts/ci-system-deps.sh)` },
  async (t) => {
    const { app, auth, key } = await startTestApp(t, 'embedded');
    const wanted = largestPathExample();
    t.ok(wanted <= maxSeededPets, `the path parameters' examples name ids up to ${wanted}`);
    for (let id = 0; id < wanted;) {
      const created = await app.inject({ method: 'POST', url: '/v1/pets', headers: auth, payload: seedPet });
      id = (created.json() as { id: number }).id;
    }
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const { page, close } = await BrowserPage.open();
    t.teardown(close);
    await page.navigate(`${address}/docs`);

    // Authorize as a consumer does: the dialog, the key typed in, Authorize, Close.
    await page.click('.auth-wrapper .authorize');
    await page.type('#auth-bearer-value', key);
    await page.click('.auth-btn-wrapper button[type=submit]');
    await page.click('.auth-btn-wrapper .btn-done');

    const blocks = opblocks();
    t.ok(blocks.length >= 3, `${blocks.length} operations`);
    for (const { operationId, selector } of blocks) {
      await page.click(`${selector} .opblock-summary-control`);
      await page.click(`${selector} .try-out__btn`);
      await page.click(`${selector} .execute`);
      const status = await page.waitFor(
        `document.querySelector(${JSON.stringify(`${selector} .live-responses-table .response .response-col_status`)})?.textContent`,
        `the response of ${operationId}`,
      );
      const sent = await page.evaluate(
        `document.querySelector(${JSON.stringify(`${selector} .request-url pre`)})?.textContent ?? ''`,
      );
      t.match(String(status), /^2\d\d\b/, `${operationId}: ${String(status)} (${String(sent)})`);
    }
  },
);
