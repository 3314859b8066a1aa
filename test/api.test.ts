import t, { type Test } from 'tap';
import { generateApiKey, toStoredKey } from '../src/auth/keys.js';
import { insertApiKey, revokeApiKeyByName } from '../src/db/apiKeys.js';
import { forEachBackend, startTestApp, type TestApp } from './helpers/app.js';
import { allowList, undeclaredMethodOn } from './helpers/methods.js';

const maxId = Number.MAX_SAFE_INTEGER;

function post(ctx: TestApp, body: unknown, headers: Record<string, string> = {}) {
  return ctx.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...ctx.auth, 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function get(ctx: TestApp, url: string, headers: Record<string, string> = ctx.auth) {
  return ctx.app.inject({ method: 'GET', url, headers });
}

function assertError(
  t: Test,
  res: { statusCode: number; json(): unknown; headers: Record<string, unknown> },
  status: number,
  code: string,
) {
  t.equal(res.statusCode, status, `status ${status}`);
  t.match(res.headers['content-type'], /^application\/json/);
  const body = res.json() as Record<string, unknown>;
  t.same(Object.keys(body).sort(), ['code', 'message', 'status'], 'exactly the Error object fields');
  t.equal(body['code'], code);
  t.equal(body['status'], status, 'status field equals the HTTP status');
  t.type(body['message'], 'string');
  return body as { code: string; message: string; status: number };
}

function nextLink(header: unknown): string | undefined {
  return typeof header === 'string' ? /^<([^>]+)>; rel="next"$/.exec(header)?.[1] : undefined;
}

await forEachBackend(t, async (t, backend) => {
  const ctx = await startTestApp(t, backend);

  await t.test('createPet', async (t) => {
    await t.test('answers 201 with the pet, its id and a Location header', async (t) => {
      const res = await post(ctx, { name: 'Rex', categoryId: 3, status: 'pending' });
      t.equal(res.statusCode, 201);
      const pet = res.json();
      t.match(pet, { name: 'Rex', categoryId: 3, status: 'pending' });
      t.ok(Number.isSafeInteger(pet.id) && pet.id > 0, 'id is a positive integer');
      t.equal(res.headers['location'], `/v1/pets/${pet.id}`);
    });

    await t.test('status defaults to available and is always in the response', async (t) => {
      const res = await post(ctx, { name: 'Tom', categoryId: 4 });
      t.equal(res.statusCode, 201);
      t.equal(res.json().status, 'available');
    });

    await t.test('accepts a name of 100 characters and categoryId up to 2^53-1', async (t) => {
      const res = await post(ctx, { name: 'n'.repeat(100), categoryId: maxId });
      t.equal(res.statusCode, 201);
      t.equal(res.json().categoryId, maxId, 'the largest id comes back exact');
      t.equal(res.json().name.length, 100);
    });

    await t.test('keeps a name outside the Basic Multilingual Plane exactly as sent', async (t) => {
      const res = await post(ctx, { name: 'Rex 🐕 Ünïcødé', categoryId: 1 });
      t.equal(res.statusCode, 201);
      t.equal(res.json().name, 'Rex 🐕 Ünïcødé');
    });

    await t.test('accepts application/json with a charset parameter', async (t) => {
      const res = await post(
        ctx,
        { name: 'Ada', categoryId: 1 },
        { 'content-type': 'application/json; charset=utf-8' },
      );
      t.equal(res.statusCode, 201);
    });

    const invalidBodies: Array<[string, unknown, RegExp]> = [
      ['missing name', { categoryId: 1 }, /'name'/],
      ['missing categoryId', { name: 'Rex' }, /'categoryId'/],
      ['empty name', { name: '', categoryId: 1 }, /name/],
      ['name of 101 characters', { name: 'n'.repeat(101), categoryId: 1 }, /name/],
      ['name with a control character', { name: 'Re\u0007x', categoryId: 1 }, /control characters/],
      ['name with NUL', { name: 'Re\u0000x', categoryId: 1 }, /control characters/],
      ['name with an unpaired surrogate', { name: 'Re\ud800x', categoryId: 1 }, /unpaired UTF-16 surrogate/],
      ['name ending with a lone low surrogate', { name: 'Rex\udc00', categoryId: 1 }, /unpaired UTF-16 surrogate/],
      ['name ending with a line feed', { name: 'Rex\n', categoryId: 1 }, /control characters/],
      ['name that is a number', { name: 5, categoryId: 1 }, /name must be string/],
      ['categoryId that is a string', { name: 'Rex', categoryId: '5' }, /categoryId must be integer/],
      ['categoryId that is fractional', { name: 'Rex', categoryId: 1.5 }, /categoryId must be integer/],
      ['categoryId of 0', { name: 'Rex', categoryId: 0 }, /categoryId must be >= 1/],
      ['negative categoryId', { name: 'Rex', categoryId: -3 }, /categoryId must be >= 1/],
      ['categoryId beyond 2^53-1', { name: 'Rex', categoryId: 9007199254740993 }, /9007199254740991.*exactly/],
      ['status outside the enum', { name: 'Rex', categoryId: 1, status: 'lost' }, /available, pending, sold/],
      ['status null', { name: 'Rex', categoryId: 1, status: null }, /status/],
      ['a client-sent id', { id: 7, name: 'Rex', categoryId: 1 }, /'id'.*assigns/],
      ['an unknown field', { name: 'Rex', categoryId: 1, colour: 'brown' }, /'colour'/],
      ['an array', [{ name: 'Rex', categoryId: 1 }], /object/],
      ['null', null, /object/],
      ['a string', 'Rex', /./],
    ];
    for (const [label, body, message] of invalidBodies) {
      await t.test(`rejects ${label} with 400`, async (t) => {
        const res = await post(ctx, label === 'a string' ? '"Rex"' : body);
        const error = assertError(t, res, 400, 'invalid_request');
        t.match(error.message, message);
      });
    }

    await t.test('rejects a categoryId beyond 2^53-1 sent as a bare JSON number literal', async (t) => {
      const res = await post(ctx, '{"name":"Rex","categoryId":18446744073709551615}');
      assertError(t, res, 400, 'invalid_request');
    });

    await t.test('accepts a surrogate pair written as two escapes (one code point)', async (t) => {
      const res = await post(ctx, '{"name":"Rex \\ud83d\\udc15","categoryId":1}');
      t.equal(res.statusCode, 201);
      t.equal(res.json().name, 'Rex 🐕');
    });

    await t.test('rejects an unpaired surrogate in any string of the body, an unknown field too', async (t) => {
      const res = await post(ctx, '{"name":"Rex","categoryId":1,"x\\udfff":1}');
      t.match(assertError(t, res, 400, 'invalid_request').message, /unpaired UTF-16 surrogate/);
    });

    await t.test('rejects malformed JSON with 400', async (t) => {
      assertError(t, await post(ctx, '{"name": "Rex",'), 400, 'invalid_request');
    });

    await t.test('rejects an empty JSON body with 400', async (t) => {
      assertError(t, await post(ctx, ''), 400, 'invalid_request');
    });

    await t.test('rejects a request without body or Content-Type with 400', async (t) => {
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/pets', headers: ctx.auth });
      assertError(t, res, 400, 'invalid_request');
    });

    await t.test('rejects prototype pollution attempts with 400', async (t) => {
      assertError(
        t,
        await post(ctx, '{"name":"Rex","categoryId":1,"__proto__":{"admin":true}}'),
        400,
        'invalid_request',
      );
    });

    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      await t.test(`rejects Content-Type ${contentType} with 415`, async (t) => {
        const res = await ctx.app.inject({
          method: 'POST',
          url: '/v1/pets',
          headers: { ...ctx.auth, 'content-type': contentType },
          payload: 'name=Rex',
        });
        assertError(t, res, 415, 'unsupported_media_type');
      });
    }

    await t.test('rejects a body over the limit with 413', async (t) => {
      const res = await post(ctx, { name: 'x'.repeat(70_000), categoryId: 1 });
      assertError(t, res, 413, 'payload_too_large');
    });
  });

  await t.test('getPet', async (t) => {
    const created = (await post(ctx, { name: 'Fetchme', categoryId: 12, status: 'sold' })).json();

    await t.test('returns what createPet returned', async (t) => {
      const res = await get(ctx, `/v1/pets/${created.id}`);
      t.equal(res.statusCode, 200);
      t.same(res.json(), created);
    });

    await t.test('answers 404 with the Error object for an unknown id', async (t) => {
      const error = assertError(t, await get(ctx, '/v1/pets/999999999'), 404, 'not_found');
      t.match(error.message, /999999999/);
    });

    for (const [label, id, message] of [
      ['a non-numeric id', 'abc', /petId.*integer/],
      ['a hexadecimal id', '0x10', /petId.*integer/],
      ['an exponent id', '1e3', /petId.*integer/],
      ['an id beyond int64', '9223372036854775808', /petId.*9223372036854775807/],
      ['an id below int64', '-9223372036854775809', /petId.*-9223372036854775808/],
    ] as const) {
      await t.test(`rejects ${label} with 400`, async (t) => {
        const error = assertError(t, await get(ctx, `/v1/pets/${id}`), 400, 'invalid_request');
        t.match(error.message, message);
      });
    }

    // petId is int64: an int64 the service never assigns names no pet.
    for (const id of ['0', '-1', '9007199254740993', '9223372036854775807', '-9223372036854775808']) {
      await t.test(`answers 404 for the int64 id ${id}`, async (t) => {
        assertError(t, await get(ctx, `/v1/pets/${id}`), 404, 'not_found');
      });
    }
  });

  await t.test('listPets', async (t) => {
    // A database of its own, so counts and pages are this test's alone.
    const own = await startTestApp(t, backend);
    const statuses = ['available', 'pending', 'sold'] as const;
    const created: Array<{ id: number; status: string }> = [];
    for (let index = 0; index < 45; index += 1) {
      created.push(
        (await post(own, { name: `pet-${index}`, categoryId: 1 + (index % 5), status: statuses[index % 3] })).json(),
      );
    }

    await t.test('returns 20 pets in ascending id order by default, with a next link', async (t) => {
      const res = await get(own, '/v1/pets');
      t.equal(res.statusCode, 200);
      t.same(res.json(), created.slice(0, 20));
      t.ok(nextLink(res.headers['link']), 'Link rel="next" present');
    });

    await t.test('walking the next links returns every pet once, in order', async (t) => {
      const seen = [];
      let url: string | undefined = '/v1/pets?limit=7';
      let pages = 0;
      while (url) {
        const res = await get(own, url);
        t.equal(res.statusCode, 200);
        const page = res.json();
        t.ok(page.length <= 7);
        seen.push(...page);
        url = nextLink(res.headers['link']);
        pages += 1;
      }
      t.equal(pages, 7, '45 pets in pages of 7');
      t.same(seen, created);
    });

    await t.test('the status filter returns only that status, paged in order', async (t) => {
      for (const status of statuses) {
        const seen = [];
        let url: string | undefined = `/v1/pets?status=${status}&limit=4`;
        while (url) {
          const res = await get(own, url);
          seen.push(...res.json());
          const link = nextLink(res.headers['link']);
          if (link) t.match(link, `status=${status}`, 'the next link keeps the filter');
          url = link;
        }
        t.same(
          seen,
          created.filter((pet) => pet.status === status),
          status,
        );
      }
    });

    await t.test('no next link when the page ends the list exactly', async (t) => {
      const res = await get(own, '/v1/pets?limit=100');
      t.equal(res.json().length, 45);
      t.notOk(res.headers['link']);
      const exact = await get(own, '/v1/pets?status=available&limit=15');
      t.equal(exact.json().length, 15);
      t.notOk(exact.headers['link'], 'exactly 15 available pets, no next page');
    });

    await t.test('only the cursor as issued is accepted, not another spelling of it', async (t) => {
      const first = await get(own, '/v1/pets?limit=7');
      const next = nextLink(first.headers['link']) ?? '';
      const issued = new URL(next, 'http://x').searchParams.get('cursor') ?? '';
      t.equal((await get(own, `/v1/pets?limit=7&cursor=${issued}`)).statusCode, 200, 'as issued');
      // base64 ignores the unused low bits of the last character: these decode to the same bytes.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = alphabet.indexOf(issued.slice(-1));
      const unusedBits = (6 * issued.length) % 8;
      t.ok(unusedBits > 0, `the issued cursor ${issued} has unused bits to vary`);
      const respelled = issued.slice(0, -1) + (alphabet[last ^ 1] ?? '');
      t.same(Buffer.from(respelled, 'base64url'), Buffer.from(issued, 'base64url'), 'the same bytes');
      const error = assertError(t, await get(own, `/v1/pets?limit=7&cursor=${respelled}`), 400, 'invalid_request');
      t.match(error.message, /cursor/);
    });

    await t.test('limit bounds 1 and 100 are accepted', async (t) => {
      t.equal((await get(own, '/v1/pets?limit=1')).json().length, 1);
      t.equal((await get(own, '/v1/pets?limit=100')).statusCode, 200);
    });

    for (const [query, message] of [
      ['limit=0', /limit.*>= 1/],
      ['limit=101', /limit.*<= 100/],
      ['limit=abc', /limit.*integer/],
      ['limit=2.5', /limit.*integer/],
      ['limit=0x10', /limit.*integer/],
      ['limit=', /limit/],
      ['limit=1&limit=2', /limit/],
      ['status=lost', /available, pending, sold/],
      ['status=AVAILABLE', /available, pending, sold/],
      ['cursor=bm9wZQ', /cursor/],
      ['cursor=%25%25', /cursor/],
      [`cursor=${'a'.repeat(65)}`, /cursor/],
    ] as const) {
      await t.test(`rejects ${query} with 400`, async (t) => {
        const error = assertError(t, await get(own, `/v1/pets?${query}`), 400, 'invalid_request');
        t.match(error.message, message);
      });
    }

    await t.test('an empty catalogue is an empty array', async (t) => {
      const empty = await startTestApp(t, backend);
      const res = await get(empty, '/v1/pets?status=sold');
      t.equal(res.statusCode, 200);
      t.same(res.json(), []);
      t.notOk(res.headers['link']);
    });
  });

  await t.test('authentication', async (t) => {
    const operations = [
      { method: 'GET' as const, url: '/v1/pets' },
      { method: 'POST' as const, url: '/v1/pets', payload: { name: 'Rex', categoryId: 1 } },
      { method: 'GET' as const, url: '/v1/pets/1' },
    ];
    for (const operation of operations) {
      await t.test(`${operation.method} ${operation.url} without a key is 401 with a Bearer challenge`, async (t) => {
        const res = await ctx.app.inject(operation);
        assertError(t, res, 401, 'unauthorized');
        t.equal(res.headers['www-authenticate'], 'Bearer realm="pets"');
      });
    }

    const cases: Array<[string, string | undefined, string]> = [
      ['an unknown key', 'Bearer pets_notarealkeyatallnotarealkeyatall', 'Bearer realm="pets", error="invalid_token"'],
      ['the key in another case', `Bearer ${ctx.key.toUpperCase()}`, 'Bearer realm="pets", error="invalid_token"'],
      ['the Basic scheme', `Basic ${Buffer.from(`user:${ctx.key}`).toString('base64')}`, 'Bearer realm="pets"'],
      ['the key without a scheme', ctx.key, 'Bearer realm="pets"'],
      ['an empty bearer token', 'Bearer ', 'Bearer realm="pets", error="invalid_token"'],
    ];
    for (const [label, header, challenge] of cases) {
      await t.test(`${label} is 401`, async (t) => {
        const res = await get(ctx, '/v1/pets', header === undefined ? {} : { authorization: header });
        assertError(t, res, 401, 'unauthorized');
        t.equal(res.headers['www-authenticate'], challenge);
      });
    }

    await t.test('the scheme name is case-insensitive', async (t) => {
      t.equal((await get(ctx, '/v1/pets', { authorization: `bearer ${ctx.key}` })).statusCode, 200);
      t.equal((await get(ctx, '/v1/pets', { authorization: `BEARER ${ctx.key}` })).statusCode, 200);
    });

    await t.test('a key in the query string is not accepted', async (t) => {
      assertError(t, await get(ctx, `/v1/pets?access_token=${ctx.key}`, {}), 401, 'unauthorized');
    });

    await t.test('authentication comes before validation', async (t) => {
      const badBody = await ctx.app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { 'content-type': 'application/json' },
        payload: '{"name": ',
      });
      assertError(t, badBody, 401, 'unauthorized');
      assertError(t, await get(ctx, '/v1/pets?limit=1000', {}), 401, 'unauthorized');
      assertError(
        t,
        await get(ctx, '/v1/pets/abc', { authorization: 'Bearer wrongwrongwrongwrong' }),
        401,
        'unauthorized',
      );
      const wrongType = await ctx.app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: { 'content-type': 'text/plain' },
        payload: 'x',
      });
      assertError(t, wrongType, 401, 'unauthorized');
    });

    await t.test('several keys work at once, and a revoked key stops working without a restart', async (t) => {
      const second = generateApiKey();
      await insertApiKey(ctx.db, toStoredKey('second', second));
      const withSecond = { authorization: `Bearer ${second}` };
      t.equal((await get(ctx, '/v1/pets', withSecond)).statusCode, 200, 'a new key works at once');
      t.equal((await get(ctx, '/v1/pets')).statusCode, 200, 'the first key still works');
      await revokeApiKeyByName(ctx.db, 'second');
      assertError(t, await get(ctx, '/v1/pets', withSecond), 401, 'unauthorized');
      t.equal((await get(ctx, '/v1/pets')).statusCode, 200, 'other keys are unaffected');
    });
  });

  await t.test('errors of the framework are Error objects too', async (t) => {
    await t.test('unknown route is 404', async (t) => {
      assertError(t, await get(ctx, '/v1/nothing-here'), 404, 'not_found');
      assertError(t, await get(ctx, '/pets'), 404, 'not_found');
      assertError(t, await get(ctx, '/v1/pets/1/extra'), 404, 'not_found');
    });

    await t.test('a known path with another method is 405 with Allow', async (t) => {
      // Methods and Allow come from openapi.yaml, so adding an operation to a path changes nothing here.
      for (const path of ['/pets/{petId}', '/pets']) {
        const { method, allowed, url } = undeclaredMethodOn(path);
        const res = await ctx.app.inject({ method, url: url.replace('{petId}', '1'), headers: ctx.auth });
        assertError(t, res, 405, 'method_not_allowed');
        t.same(allowList(res.headers['allow']), allowed, `${method} ${path}: Allow lists the declared methods`);
      }
    });
  });

  await t.test('a response that breaks the contract is a 500 Error object, never sent', async (t) => {
    const own = await startTestApp(t, backend);
    // The table allows what the contract does not (a control character in a
    // name), so the response validator is the last line of defence.
    const { rows } = await own.db.query<{ id: string }>(
      { name: 'test.insert_bad', text: 'INSERT INTO pets (name, category_id) VALUES ($1, 1) RETURNING id' },
      ['bad\u0001name'],
    );
    const res = await get(own, `/v1/pets/${rows[0]?.id}`);
    const error = assertError(t, res, 500, 'internal_error');
    t.notMatch(error.message, /bad|name|response/, 'no internal detail in the body');
    t.notMatch(res.body, /bad\\u0001name/);
    const list = await get(own, '/v1/pets');
    assertError(t, list, 500, 'internal_error');
  });

  await t.test('ids stay exact up to 2^53-1', async (t) => {
    const own = await startTestApp(t, backend);
    await own.db.execScript(`ALTER TABLE pets ALTER COLUMN id RESTART WITH ${maxId - 1}`);
    const first = (await post(own, { name: 'Big', categoryId: 1 })).json();
    t.equal(first.id, maxId - 1);
    const fetched = await get(own, `/v1/pets/${maxId - 1}`);
    t.equal(fetched.json().id, maxId - 1);
    t.match(fetched.body, `"id":${maxId - 1}`, 'written as an exact integer');
  });
});

await t.test('a database that cannot be reached gives 503', async (t) => {
  const { openDatabase } = await import('../src/db/index.js');
  const { buildApp } = await import('../src/app.js');
  const { testConfig, testLimits } = await import('./helpers/app.js');
  const db = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
  const app = await buildApp(testConfig, { db, logger: false, limits: testLimits });
  t.teardown(async () => {
    await app.close();
    await db.close();
  });
  const res = await app.inject({
    method: 'GET',
    url: '/v1/pets',
    headers: { authorization: 'Bearer pets_somekeysomekeysomekey' },
  });
  assertError(t, res, 503, 'service_unavailable');
});
