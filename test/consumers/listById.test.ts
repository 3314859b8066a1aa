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

await forEachBackend(t, async (t, backend) => {
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

  await t.test('cannot be combined with limit or cursor', async (t) => {
    for (const extra of ['limit=5', 'cursor=djE6MQ']) {
      const res = await list(ctx, `id=${a.id}&${extra}`);
      t.equal(res.statusCode, 400, extra);
      t.match(res.json(), { code: 'invalid_request', message: /cannot be combined/ });
    }
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
