import t from 'tap';
import type { FastifyInstance } from 'fastify';
import type { Precondition } from '../../src/entityTags.js';
import { errorResult } from '../../src/handlers/errorResult.js';
import { conditionalSpec } from '../helpers/conditionalSpec.js';
import { startSpecApp } from '../helpers/specApp.js';

// Conditional requests for any method that declares ETag and 412 (RFC 9110, 13), on a spec of the
// test's own: the HTTP layer reads If-Match and If-None-Match, the handler checks them against what it
// holds inside its "transaction", and the 412 is the operation's declared Error object.

interface Thing {
  id: string;
  name: string;
  size?: number;
}
interface Input {
  params: { thingId: string };
  body: { name: string; size?: number };
  precondition: Precondition<Thing>;
}

function thingsApp(t: Parameters<typeof startSpecApp>[0]): Promise<FastifyInstance> {
  const store = new Map<string, Thing>();
  const failed = () => errorResult(412, 'precondition_failed' as never, 'The thing has changed.');
  const put =
    (checks: boolean) =>
    async ({ params, body, precondition }: Input) => {
      const current = store.get(params.thingId);
      if (checks && !precondition.isMetBy(current)) return failed();
      // Keys in another order than the schema's: the tag follows the serialized bytes, not this object.
      const stored = { ...body, id: params.thingId };
      store.set(params.thingId, stored);
      return { status: current ? 200 : 201, body: stored };
    };
  return startSpecApp(t, conditionalSpec, {
    getThing: async ({ params }: Input) => {
      const current = store.get(params.thingId);
      return current ? { status: 200, body: current } : errorResult(404, 'not_found', 'No such thing.');
    },
    putThing: put(true),
    sloppyPut: put(false),
    deleteThing: async ({ params, precondition }: Input) => {
      const current = store.get(params.thingId);
      if (!current) return errorResult(404, 'not_found', 'No such thing.');
      if (!precondition.isMetBy(current)) return failed();
      store.delete(params.thingId);
      return { status: 204 };
    },
  });
}

const json = { 'content-type': 'application/json' };

t.test('PUT: If-None-Match: * creates only; If-Match replaces only what the client saw', async (t) => {
  const app = await thingsApp(t);
  const put = (headers: Record<string, string>, name = 'Anvil') =>
    app.inject({
      method: 'PUT',
      url: '/v1/things/anvil',
      headers: { ...json, ...headers },
      payload: { name, size: 3 },
    });
  const get = (headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: '/v1/things/anvil', headers });

  const created = await put({ 'if-none-match': '*' });
  t.equal(created.statusCode, 201);
  const tag = String(created.headers['etag']);
  t.match(tag, /^"[A-Za-z0-9_-]{22}"$/, 'a write that declares ETag answers it');
  t.equal((await get()).headers['etag'], tag, "the write's tag is the one GET answers for the same body");

  const again = await put({ 'if-none-match': '*' }, 'Other');
  t.equal(again.statusCode, 412, 'create-only refuses to replace');
  t.same(again.json(), { code: 'precondition_failed', message: again.json().message, status: 412 });
  t.equal(again.headers['etag'], undefined);
  t.equal((await get()).json().name, 'Anvil', 'nothing written');

  for (const [ifMatch, status] of [
    ['"stale"', 412],
    [`W/${tag}`, 412], // If-Match compares strongly
    [`"one,with,commas", ${tag}`, 200], // a comma may sit inside a tag (no space may)
  ] as const) {
    const res = await put({ 'if-match': ifMatch });
    t.equal(res.statusCode, status, `If-Match: ${ifMatch}`);
  }
  const current = String((await get()).headers['etag']);
  t.equal(current, tag, 'the same body written again has the same tag');

  const replaced = await put({ 'if-match': current }, 'Bigger anvil');
  t.equal(replaced.statusCode, 200);
  t.not(replaced.headers['etag'], current);
  t.equal((await get()).headers['etag'], replaced.headers['etag']);
  t.equal((await put({ 'if-match': current }, 'Lost update')).statusCode, 412, 'the old tag no longer holds');

  // RFC 9110, 13.2.2: If-Match first; a write whose If-None-Match matches fails too.
  const now = String(replaced.headers['etag']);
  t.equal((await put({ 'if-match': now, 'if-none-match': now })).statusCode, 412);
  t.equal((await put({ 'if-match': '"stale"', 'if-none-match': '"other"' })).statusCode, 412);
  t.equal((await put({ 'if-match': now, 'if-none-match': '"other"' })).statusCode, 200);
  t.equal((await put({ 'if-match': '*' })).statusCode, 200, 'If-Match: * holds for an existing thing');
  t.equal((await put({})).statusCode, 200, 'no condition, no check');

  const missing = await app.inject({
    method: 'PUT',
    url: '/v1/things/ghost',
    headers: { ...json, 'if-match': '*' },
    payload: { name: 'Ghost' },
  });
  t.equal(missing.statusCode, 412, 'If-Match: * fails where nothing exists');
  t.equal((await app.inject({ method: 'GET', url: '/v1/things/ghost' })).statusCode, 404, 'and creates nothing');
});

t.test('GET: If-None-Match answers 304 (weakly), If-Match the declared 412 (strongly)', async (t) => {
  const app = await thingsApp(t);
  await app.inject({ method: 'PUT', url: '/v1/things/kettle', headers: json, payload: { name: 'Kettle' } });
  const get = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/v1/things/kettle', headers });
  const tag = String((await get({})).headers['etag']);
  t.equal((await get({ 'if-none-match': `W/${tag}` })).statusCode, 304);
  t.equal((await get({ 'if-match': tag })).statusCode, 200);
  const stale = await get({ 'if-match': '"stale"' });
  t.equal(stale.statusCode, 412);
  t.equal(stale.json().code, 'precondition_failed');
  t.equal(stale.headers['etag'], undefined, 'the 412 does not tell the current tag');
  t.equal((await get({ 'if-match': `W/${tag}` })).statusCode, 412, 'a weak tag never matches If-Match');
  t.equal((await get({ 'if-match': '"stale"', 'if-none-match': tag })).statusCode, 412, 'If-Match is evaluated first');
});

t.test('DELETE: If-Match against the tag its GET answers', async (t) => {
  const app = await thingsApp(t);
  await app.inject({ method: 'PUT', url: '/v1/things/lamp', headers: json, payload: { name: 'Lamp', size: 2 } });
  const tag = String((await app.inject({ method: 'GET', url: '/v1/things/lamp' })).headers['etag']);
  const del = (ifMatch: string) =>
    app.inject({ method: 'DELETE', url: '/v1/things/lamp', headers: { 'if-match': ifMatch } });
  t.equal((await del('"stale"')).statusCode, 412);
  t.equal((await app.inject({ method: 'GET', url: '/v1/things/lamp' })).statusCode, 200, 'still there');
  t.equal((await del(tag)).statusCode, 204);
  t.equal((await app.inject({ method: 'GET', url: '/v1/things/lamp' })).statusCode, 404);
});

t.test('a handler that succeeds without checking a precondition sent to it is a 500, not a silent write', async (t) => {
  const app = await thingsApp(t);
  const put = (headers: Record<string, string>) =>
    app.inject({ method: 'PUT', url: '/v1/sloppy/box', headers: { ...json, ...headers }, payload: { name: 'Box' } });
  t.equal((await put({})).statusCode, 201, 'nothing to check');
  const res = await put({ 'if-match': '"anything"' });
  t.equal(res.statusCode, 500);
  t.equal(res.json().code, 'internal_error');
});
