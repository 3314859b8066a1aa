import t from 'tap';
import { forEachBackend, startTestApp, type TestApp } from '../helpers/app.js';

async function create(ctx: TestApp, name: string, status: string): Promise<{ id: number }> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...ctx.auth, 'content-type': 'application/json' },
    payload: { name, categoryId: 1, status },
  });
  return res.json<{ id: number }>();
}

const list = (ctx: TestApp, query: string) =>
  ctx.app.inject({ method: 'GET', url: `/v1/pets?${query}`, headers: ctx.auth });

void forEachBackend(t, async (t, backend) => {
  const ctx = await startTestApp(t, backend);
  const a = await create(ctx, 'A', 'available');
  const b = await create(ctx, 'B', 'sold');
  const c = await create(ctx, 'C', 'available');

  await t.test('repeated id returns the pets that exist, ascending, once each', async (t) => {
    const res = await list(ctx, `id=${c.id}&id=999999&id=${a.id}&id=${c.id}`);
    t.equal(res.statusCode, 200);
    t.same(
      res.json<{ id: number }[]>().map((pet) => pet.id),
      [a.id, c.id],
    );
    t.equal(res.headers['link'], undefined, 'one page: no next link');
  });

  await t.test('one id answers like getPet did, or [] where getPet said 404', async (t) => {
    const one = await list(ctx, `id=${b.id}`);
    t.same(one.json(), [{ id: b.id, name: 'B', categoryId: 1, status: 'sold' }]);
    t.same((await list(ctx, 'id=999999')).json(), []);
    t.same((await list(ctx, 'id=0&id=-5&id=9223372036854775807')).json(), [], 'ids never assigned match nothing');
  });

  await t.test('combines with status', async (t) => {
    const res = await list(ctx, `id=${a.id}&id=${b.id}&id=${c.id}&status=available`);
    t.same(
      res.json<{ id: number }[]>().map((pet) => pet.id),
      [a.id, c.id],
    );
  });

  await t.test('limit bounds an id lookup to its lowest ids, and cursor starts after its position', async (t) => {
    const ids = (res: Awaited<ReturnType<typeof list>>) => res.json<{ id: number }[]>().map((pet) => pet.id);
    const all = `id=${c.id}&id=${a.id}&id=${b.id}`;
    for (const limit of [1, 2, 3, 20, 100]) {
      const res = await list(ctx, `${all}&limit=${limit}`);
      t.equal(res.statusCode, 200, `limit=${limit}`);
      t.same(ids(res), [a.id, b.id, c.id].slice(0, limit), `limit=${limit}: the lowest ids`);
      t.equal(res.headers['link'], undefined, 'an id lookup has no next link');
    }
    const afterA = Buffer.from(`v1:${a.id}`).toString('base64url');
    t.same(ids(await list(ctx, `${all}&cursor=${afterA}`)), [b.id, c.id], 'after the cursor');
    t.same(ids(await list(ctx, `${all}&cursor=${afterA}&limit=1&status=available`)), [c.id], 'all four together');
    const unissued = await list(ctx, `${all}&cursor=x`);
    t.equal(unissued.statusCode, 400, 'a cursor the service never issued is a 400, with id as without');
  });

  await t.test('1 to 100 int64 values', async (t) => {
    const hundred = Array.from({ length: 100 }, (_, index) => `id=${index + 1}`).join('&');
    t.equal((await list(ctx, hundred)).statusCode, 200, '100 values');
    t.equal((await list(ctx, `${hundred}&id=101`)).statusCode, 400, '101 values');
    for (const bad of ['id=', 'id=x', 'id=1.5', 'id=0x10', 'id=9223372036854775808']) {
      const res = await list(ctx, bad);
      t.equal(res.statusCode, 400, bad);
      t.match(res.json(), { code: 'invalid_request', message: /'id'/ });
    }
  });
});
