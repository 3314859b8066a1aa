import t from 'tap';
import { buildApp } from '../../src/app.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import type { Database } from '../../src/db/index.js';
import { testConfig, testLimits } from '../helpers/app.js';
import { openBackend } from '../helpers/databases.js';
import { allowList } from '../helpers/methods.js';
import { basePath, loadContract } from '../../lib/conformance/spec.js';

const { document, operations } = loadContract();

/** The spec's paths, each with the methods it declares (what a 405's Allow lists), sorted. */
function declaredPaths(): Map<string, string[]> {
  const paths = new Map<string, string[]>();
  for (const { path, method } of operations) paths.set(path, [...(paths.get(path) ?? []), method].sort());
  return paths;
}

/** The database, counting every use of it: a query, a transaction or a replica asked for. */
function counted(db: Database): { db: Database; uses: () => number } {
  let uses = 0;
  const spied = new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'query' || property === 'transaction' || property === 'replica') uses += 1;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: spied, uses: () => uses };
}

t.test('HEAD, which openapi.yaml declares nowhere, is a 405 with Allow and runs no query', async (t) => {
  const opened = await openBackend('embedded');
  const key = generateApiKey();
  await insertApiKey(opened.db, toStoredKey('test', key));
  const { db, uses } = counted(opened.db);
  // The key is remembered after its first use, so that a HEAD needs no query to be admitted.
  const app = await buildApp({ ...testConfig, API_KEY_CACHE_SECONDS: 60 }, { db, logger: false, limits: testLimits });
  t.teardown(async () => {
    await app.close();
    await opened.close();
  });
  const auth = { authorization: `Bearer ${key}` };
  t.equal((await app.inject({ method: 'GET', url: `${basePath(document)}/pets`, headers: auth })).statusCode, 200);

  for (const [path, allowed] of declaredPaths()) {
    t.notOk(allowed.includes('HEAD'), `openapi.yaml declares no HEAD on ${path}`);
    const url = basePath(document) + path.replace(/\{[^}]+\}/g, '1');
    const before = uses();
    const res = await app.inject({ method: 'HEAD', url, headers: auth });
    t.equal(res.statusCode, 405, `HEAD ${url}`);
    t.same(allowList(res.headers['allow']), allowed, 'Allow lists the methods openapi.yaml declares');
    t.ok(res.headers['x-request-id'], 'it carries X-Request-Id as every answer does');
    t.notOk(res.headers['etag'], 'no ETag: nothing was read');
    t.equal(uses() - before, 0, 'the database was not used');
  }
});
