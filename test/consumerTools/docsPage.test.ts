import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import t from 'tap';
import { listOperations, loadOpenApiDocument, parametersOf } from '../../src/openapi/document.js';
import { startAppWithoutDatabase, startTestApp } from '../helpers/app.js';
import { BrowserPage, chromiumFlags, chromiumPath } from '../helpers/browser.js';
import { scratchDir } from '../helpers/scratchSpace.js';

// The /docs page as a consumer sees it, in headless Chromium (test/http/docs.test.ts checks what it serves).

const chromium = chromiumPath;
// An animal to look up by the path parameters' examples; a bound on how many are created for them.
const seedPet = { name: 'Rex', categoryId: 3 };
const maxSeededPets = 100;

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
