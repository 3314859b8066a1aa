import t from 'tap';
import { forEachBackend, startTestApp, type TestApp } from '../helpers/app.js';

const get = (ctx: TestApp, url: string, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'GET', url, headers: { ...ctx.auth, ...headers } });

async function create(ctx: TestApp, name: string): Promise<{ id: number }> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...ctx.auth, 'content-type': 'application/json' },
    payload: { name, categoryId: 2 },
  });
  return res.json<{ id: number }>();
}

void forEachBackend(t, async (t, backend) => {
  const ctx = await startTestApp(t, backend, { RATE_LIMIT_MAX: 1000 });
  const pet = await create(ctx, 'Tagged');

  for (const url of [`/v1/pets/${pet.id}`, `/v1/pets?id=${pet.id}`, '/v1/pets?limit=1']) {
    await t.test(`${url}: ETag, and 304 with no body when If-None-Match matches`, async (t) => {
      const first = await get(ctx, url);
      t.equal(first.statusCode, 200);
      const tag = first.headers['etag'];
      t.match(tag, /^"[A-Za-z0-9_-]{22}"$/, 'a strong tag');
      t.equal((await get(ctx, url)).headers['etag'], tag, 'the same body, the same tag');

      for (const ifNoneMatch of [String(tag), `W/${String(tag)}`, `"other", ${String(tag)}`, '*']) {
        const again = await get(ctx, url, { 'if-none-match': ifNoneMatch });
        t.equal(again.statusCode, 304, ifNoneMatch);
        t.equal(again.body, '', 'no body');
        t.equal(again.headers['etag'], tag, 'the same ETag');
        t.equal(again.headers['content-length'], undefined, 'no Content-Length');
        t.equal(again.headers['content-type'], undefined, 'no Content-Type');
        t.ok(again.headers['x-request-id'], 'still has a request id');
      }
      const stale = await get(ctx, url, { 'if-none-match': '"stale"' });
      t.equal(stale.statusCode, 200, 'another tag gets the body');
      t.same(stale.json(), first.json());
    });
  }

  await t.test('a deprecated operation keeps its deprecation headers on 304', async (t) => {
    const url = `/v1/pets/${pet.id}`;
    const tag = String((await get(ctx, url)).headers['etag']);
    const res = await get(ctx, url, { 'if-none-match': tag });
    t.equal(res.statusCode, 304);
    t.equal(res.headers['deprecation'], '@1795219200');
    t.match(res.headers['link'], /rel="successor-version"/);
  });

  await t.test('a changed list gets a new tag; a page that gains a next link too', async (t) => {
    const own = await startTestApp(t, backend);
    await create(own, 'One');
    const before = await get(own, '/v1/pets?limit=1');
    t.equal(before.headers['link'], undefined);
    await create(own, 'Two');
    const after = await get(own, '/v1/pets?limit=1', { 'if-none-match': String(before.headers['etag']) });
    t.equal(after.statusCode, 200, 'same body, but now with a next page: not 304');
    t.ok(after.headers['link'], 'the next link');
    t.not(after.headers['etag'], before.headers['etag']);
    const listAll = await get(own, '/v1/pets');
    const grown = await create(own, 'Three');
    const relisted = await get(own, '/v1/pets', { 'if-none-match': String(listAll.headers['etag']) });
    t.equal(relisted.statusCode, 200);
    t.ok(relisted.json<{ id: number }[]>().some((item) => item.id === grown.id));
  });

  await t.test('a long page (its Link mixed into its digest) that gains a next link gets a new tag', async (t) => {
    const own = await startTestApp(t, backend);
    for (let i = 0; i < 20; i++) await create(own, `${'Long name '.repeat(9)}${i}`);
    const before = await get(own, '/v1/pets?limit=20');
    t.ok(before.body.length >= 1024, 'long enough to be hashed apart from its Link');
    t.equal(before.headers['link'], undefined);
    await create(own, 'The twenty-first');
    const after = await get(own, '/v1/pets?limit=20', { 'if-none-match': String(before.headers['etag']) });
    t.equal(after.statusCode, 200, 'the same body, now with a next page: not 304');
    t.equal(after.body, before.body);
    t.ok(after.headers['link'], 'the next link');
    t.not(after.headers['etag'], before.headers['etag']);
    const again = await get(own, '/v1/pets?limit=20', { 'if-none-match': String(after.headers['etag']) });
    t.equal(again.statusCode, 304, 'and that tag matches the page with its link');
  });

  await t.test('a page with a next link and non-ASCII names: the whole body, its length in bytes', async (t) => {
    const own = await startTestApp(t, backend);
    const named = await create(own, 'Ünïcødé 🐕 名前');
    await create(own, 'Next');
    const res = await get(own, '/v1/pets?limit=1');
    t.ok(res.headers['link'], 'a next link, hashed with the body');
    t.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body), 'Content-Length counts bytes');
    t.same(
      res.json<{ id: number; name: string }[]>().map((pet) => [pet.id, pet.name]),
      [[named.id, 'Ünïcødé 🐕 名前']],
    );
    const again = await get(own, '/v1/pets?limit=1', { 'if-none-match': String(res.headers['etag']) });
    t.equal(again.statusCode, 304, 'the same page, the same tag');
  });

  await t.test('a 304 counts against the rate limit like a 200', async (t) => {
    const url = `/v1/pets/${pet.id}`;
    const tag = String((await get(ctx, url)).headers['etag']);
    const remaining = (res: { headers: Record<string, unknown> }) =>
      Number(/;r=(\d+)/.exec(String(res.headers['ratelimit']))?.[1]);
    const a = await get(ctx, url, { 'if-none-match': tag });
    const b = await get(ctx, url, { 'if-none-match': tag });
    t.equal(a.statusCode, 304);
    t.equal(remaining(b), remaining(a) - 1);
  });

  await t.test('errors carry no ETag', async (t) => {
    const res = await get(ctx, '/v1/pets/999999', { 'if-none-match': '*' });
    t.equal(res.statusCode, 404);
    t.equal(res.headers['etag'], undefined);
  });
});
