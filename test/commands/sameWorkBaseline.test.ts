// The same-work baseline of `npm run bench` (bench/sameWork/server.mjs) is a
// fair yardstick only while it answers like the service: these requests go
// to both, on one database, and their statuses, header names and the
// contract's header values must agree.
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import { openDatabase } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrations.js';
import { testConfig } from '../helpers/app.js';
import { createScratchPostgres, postgresUnavailableReason } from '../helpers/databases.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { waitForOutput } from '../helpers/processes.js';

const skip = await postgresUnavailableReason();
const quota = 40;

// Headers of the transport or of the moment, not of the contract.
const transport = new Set(['date', 'connection', 'keep-alive', 'x-request-id', 'transfer-encoding']);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function ask(base: string, path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${base}${path}`, init);
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}

/** What must agree between the two answers: the id in Location and the window's seconds may differ. */
function comparable(answer: Answer) {
  const headers = { ...answer.headers };
  for (const name of transport) delete headers[name];
  if (headers['location']) headers['location'] = headers['location'].replace(/\d+$/, '{id}');
  if (headers['ratelimit']) headers['ratelimit'] = headers['ratelimit'].replace(/;t=\d+$/, '');
  if (headers['retry-after']) headers['retry-after'] = 'seconds';
  if (headers['etag']) headers['etag'] = /^"[A-Za-z0-9_-]{22}"$/.test(headers['etag']) ? 'a strong tag' : 'malformed';
  const json = answer.body === '' ? undefined : (JSON.parse(answer.body) as Record<string, unknown>);
  if (answer.status >= 400) {
    // Error messages (and so their lengths) may be worded differently; the code and status may not.
    delete headers['content-length'];
    return { status: answer.status, headers, body: { code: json?.['code'], status: json?.['status'] } };
  }
  if (answer.status === 201) return { status: answer.status, headers, body: { ...json, id: 'assigned' } };
  return { status: answer.status, headers, body: json };
}

t.test('the same-work baseline answers like the service', skip ? { skip } : {}, async (t) => {
  const scratch = await createScratchPostgres();
  const db = await openDatabase({ url: scratch.url, poolSize: 2 });
  t.teardown(async () => {
    await db.close();
    await scratch.drop();
  });
  await migrate(db);
  const key = generateApiKey();
  await insertApiKey(db, toStoredKey('bench', key));
  await db.query(
    {
      text: "INSERT INTO pets (name, category_id, status) SELECT 'pet ' || g, 1 + g % 5, (ARRAY['available', 'pending', 'sold'])[1 + g % 3] FROM generate_series(1, 25) AS g",
    },
    [],
  );

  const ours = await buildApp(
    { ...testConfig, API_KEY_CACHE_SECONDS: 5, RATE_LIMIT_MAX: quota },
    { db, logger: false },
  );
  t.teardown(() => ours.close());
  await ours.listen({ port: 0, host: '127.0.0.1' });
  const oursUrl = `http://127.0.0.1:${(ours.server.address() as AddressInfo).port}`;

  const child = spawn(process.execPath, ['bench/sameWork/server.mjs'], {
    cwd: repoRoot,
    env: { PATH: process.env['PATH'] ?? '', DATABASE_URL: scratch.url, PORT: '0', RATE_LIMIT_MAX: String(quota) },
  });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const listening = waitForOutput(child, /same-work listening at (http:\/\/[0-9.:]+)/);
  const tooLate = new Promise<never>((_resolve, reject) => {
    setTimeout(() => {
      reject(new Error('the same-work baseline did not listen within 120 s'));
    }, 120_000).unref();
  });
  const sameWorkUrl = (await Promise.race([listening, tooLate]))[1]!;

  const auth = { authorization: `Bearer ${key}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const requests: [string, string, RequestInit?][] = [
    ['listPets, limit 20, with a next page', '/v1/pets'],
    ['listPets of a status, limit 100', '/v1/pets?status=available&limit=100'],
    ['listPets, the next page', '/v1/pets?limit=20&cursor=djE6MjA'],
    ['getPet', '/v1/pets/7'],
    ['getPet of an id no pet has', '/v1/pets/999999'],
    ['getPet of an int64 beyond the ids assigned', '/v1/pets/9223372036854775807'],
    ['getPet of a non-integer', '/v1/pets/seven'],
    ['createPet', '/v1/pets', { method: 'POST', headers: json, body: '{"name":"Rex","categoryId":3}' }],
    ['createPet with an invalid body', '/v1/pets', { method: 'POST', headers: json, body: '{"name":""}' }],
    [
      'createPet without JSON',
      '/v1/pets',
      { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'x' },
    ],
    ['listPets with limit 0', '/v1/pets?limit=0'],
    ['listPets with a cursor it never issued', '/v1/pets?cursor=zzz'],
    ['no key', '/v1/pets/7', { headers: {} }],
    ['an unknown key', '/v1/pets/7', { headers: { authorization: 'Bearer pets_unknown' } }],
    ['a malformed Authorization header', '/v1/pets/7', { headers: { authorization: 'Basic abc' } }],
  ];
  for (const [name, path, init] of requests) {
    const options = { ...init, headers: init?.headers ?? auth };
    const expected = await ask(oursUrl, path, options);
    const actual = await ask(sameWorkUrl, path, options);
    t.same(comparable(actual), comparable(expected), name);
  }

  for (const base of [oursUrl, sameWorkUrl]) {
    const tagged = await ask(base, '/v1/pets/7', { headers: auth });
    const again = await ask(base, '/v1/pets/7', { headers: { ...auth, 'if-none-match': tagged.headers['etag']! } });
    t.equal(again.status, 304, `${base === oursUrl ? 'ours' : 'same-work'}: 304 on the tag of an unchanged pet`);
    const echoed = await ask(base, '/v1/pets/7', { headers: { ...auth, 'x-request-id': 'trace-1' } });
    t.equal(echoed.headers['x-request-id'], 'trace-1', 'a valid X-Request-Id is echoed');
    t.match(
      tagged.headers['x-request-id'],
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      'else a UUID',
    );
  }

  // Both counted the same requests against the key: the next ones reach the quota together.
  const refusals: [number, number][] = [];
  for (let index = 0; index < quota && refusals.length === 0; index++) {
    const [a, b] = await Promise.all([
      ask(oursUrl, '/v1/pets/7', { headers: auth }),
      ask(sameWorkUrl, '/v1/pets/7', { headers: auth }),
    ]);
    if (a.status === 429 || b.status === 429) {
      refusals.push([a.status, b.status]);
      t.same(comparable(b), comparable(a), 'the 429');
      t.ok(a.headers['retry-after'] && b.headers['retry-after'], 'Retry-After');
    }
  }
  t.same(refusals, [[429, 429]], 'both refuse the same request');
});
