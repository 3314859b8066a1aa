import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { arazzoPath, publishedYamlPath, specPath } from '../../src/openapi/files.js';
import { publishedSpec } from '../../src/openapi/published.js';
import { startAppWithoutDatabase } from '../helpers/app.js';

const checkedIn = parse(readFileSync(specPath, 'utf8')) as unknown;

// Integers as BigInts on both sides: JavaScript numbers would take the
// int64 bounds 9223372036854775807 and 9223372036854776000 for equal. JSON is
// YAML, so the yaml package reads both; JSON.parse checks the JSON is JSON.
const exactly = (text: string) => parse(text, { intAsBigInt: true }) as unknown;

const source = readFileSync(specPath, 'utf8');
const internal = (checkedIn as { servers: Array<{ url: string; 'x-internal'?: boolean }> }).servers.filter(
  (server) => server['x-internal'] === true,
);

t.test('the spec is published as checked in but for its internal servers, without a key', async (t) => {
  t.ok(internal.length > 0, 'openapi.yaml has internal servers to leave out');
  const app = await startAppWithoutDatabase(t);
  const json = await app.inject({ method: 'GET', url: '/v1/openapi.json' });
  t.equal(json.statusCode, 200);
  t.match(json.headers['content-type'], /^application\/json/);
  t.doesNotThrow(() => JSON.parse(json.body) as unknown, 'openapi.json is JSON');
  const published = publishedSpec(exactly(source) as object);
  t.strictSame(exactly(json.body), published, 'openapi.json is openapi.yaml without them, digit for digit');
  t.match(json.body, /"maximum": 9223372036854775807\b/, "the int64 bounds' digits are there");
  const yaml = await app.inject({ method: 'GET', url: '/v1/openapi.yaml' });
  t.equal(yaml.statusCode, 200);
  t.match(yaml.headers['content-type'], /yaml/);
  t.strictSame(exactly(yaml.body), published, 'openapi.yaml: the same document');
  t.ok(source.startsWith(yaml.body.slice(0, source.indexOf('servers:'))), 'as checked in up to the servers');
  t.ok(source.endsWith(yaml.body.slice(yaml.body.indexOf('security:'))), 'and after them, comments included');
  for (const server of internal) {
    t.notMatch(json.body, server.url, `openapi.json does not name ${server.url}`);
    t.notMatch(yaml.body, server.url, `nor openapi.yaml`);
  }
  const page = (await app.inject({ method: 'GET', url: '/docs/json' })).json() as { servers: unknown[] };
  t.same(page.servers.slice(1), (published as { servers: unknown[] }).servers, 'nor the docs page: all agree');
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
  t.equal(spec.body, readFileSync(publishedYamlPath, 'utf8'));
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
