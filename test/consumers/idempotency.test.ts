import t from 'tap';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import { purgeExpiredKeys } from '../../src/db/idempotencyKeys.js';
import { buildApp } from '../../src/app.js';
import { fingerprintOf, runIdempotently } from '../../src/handlers/idempotency.js';
import { forEachBackend, startTestApp, testConfig, testLimits, type TestApp } from '../helpers/app.js';

function post(ctx: TestApp, body: unknown, key?: string, auth = ctx.auth) {
  return ctx.app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...auth, 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function countNamed(ctx: TestApp, name: string): Promise<number> {
  const { rows } = await ctx.db.query<{ count: string }>(
    { text: 'SELECT count(*) AS count FROM pets WHERE name = $1' },
    [name],
  );
  return Number(rows[0]?.count);
}

void forEachBackend(t, async (t, backend) => {
  const ctx = await startTestApp(t, backend);

  await t.test('a retry with the same key and body replays the first answer; one pet', async (t) => {
    const first = await post(ctx, { name: 'Once', categoryId: 1 }, 'key-replay');
    t.equal(first.statusCode, 201);
    t.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is no replay');
    // The same body as parsed JSON: other key order and spacing.
    const retry = await post(ctx, '{ "categoryId": 1,  "name": "Once" }', 'key-replay');
    t.equal(retry.statusCode, 201);
    t.equal(retry.body, first.body, 'the same body');
    t.equal(retry.headers['location'], first.headers['location'], 'the same Location');
    t.equal(retry.headers['idempotent-replayed'], 'true');
    t.equal(await countNamed(ctx, 'Once'), 1, 'created once');
  });

  await t.test('the same key with another body is a 422 Error object, and creates nothing', async (t) => {
    await post(ctx, { name: 'First body', categoryId: 1 }, 'key-mismatch');
    const other = await post(ctx, { name: 'Second body', categoryId: 1 }, 'key-mismatch');
    t.equal(other.statusCode, 422);
    t.same(Object.keys(other.json()).sort(), ['code', 'message', 'status']);
    t.match(other.json(), { code: 'idempotency_key_reused', status: 422 });
    t.equal(await countNamed(ctx, 'Second body'), 0);
  });

  await t.test('keys belong to the API key that sent them', async (t) => {
    const otherKey = generateApiKey();
    await insertApiKey(ctx.db, toStoredKey('other client', otherKey));
    const mine = await post(ctx, { name: 'Scoped', categoryId: 1 }, 'key-shared');
    const theirs = await post(ctx, { name: 'Scoped', categoryId: 1 }, 'key-shared', {
      authorization: `Bearer ${otherKey}`,
    });
    t.equal(theirs.statusCode, 201);
    t.equal(theirs.headers['idempotent-replayed'], undefined, 'no replay across API keys');
    t.not(theirs.json<{ id: number }>().id, mine.json<{ id: number }>().id);
    t.equal(await countNamed(ctx, 'Scoped'), 2);
  });

  await t.test('a failed request stores nothing: its retry is processed afresh', async (t) => {
    const invalid = await post(ctx, { name: 'Failed', categoryId: 0 }, 'key-failed');
    t.equal(invalid.statusCode, 400);
    const valid = await post(ctx, { name: 'Failed', categoryId: 1 }, 'key-failed');
    t.equal(valid.statusCode, 201, 'not a 422: the 400 was not stored');
    t.equal(valid.headers['idempotent-replayed'], undefined);
  });

  await t.test('Idempotency-Key is 1 to 255 printable ASCII characters', async (t) => {
    t.equal((await post(ctx, { name: 'Long', categoryId: 1 }, 'k'.repeat(255))).statusCode, 201);
    t.equal((await post(ctx, { name: 'Quoted', categoryId: 1 }, '"8e03978e-40d5"')).statusCode, 201);
    for (const [key, why] of [
      ['k'.repeat(256), '256 characters'],
      ['', 'empty'],
    ] as const) {
      const res = await post(ctx, { name: 'Refused', categoryId: 1 }, key);
      t.equal(res.statusCode, 400, why);
      t.match(res.json(), { code: 'invalid_request', message: /Idempotency-Key/i });
    }
    t.equal(await countNamed(ctx, 'Refused'), 0);
  });

  await t.test('without a key, every request creates a pet', async (t) => {
    await post(ctx, { name: 'Keyless', categoryId: 1 });
    await post(ctx, { name: 'Keyless', categoryId: 1 });
    t.equal(await countNamed(ctx, 'Keyless'), 2);
  });

  /** Moves the stored keys' clock back, as if that much time had passed since they were stored. */
  const age = (keys: string[], interval: string) =>
    ctx.db.query(
      {
        text:
          'UPDATE idempotency_keys SET created_at = created_at - $2::interval, ' +
          'expires_at = expires_at - $2::interval WHERE key = ANY($1)',
      },
      [keys, interval],
    );
  const stored = async (key: string) => {
    const { rows } = await ctx.db.query<{ count: string }>(
      { text: 'SELECT count(*) AS count FROM idempotency_keys WHERE key = $1' },
      [key],
    );
    return Number(rows[0]?.count);
  };

  await t.test('past the retention window a key is forgotten, and the purge deletes it', async (t) => {
    const first = await post(ctx, { name: 'Expiring', categoryId: 1 }, 'key-expiring');
    await age(['key-expiring'], '2 days');
    const later = await post(ctx, { name: 'Expiring', categoryId: 1 }, 'key-expiring');
    t.equal(later.statusCode, 201);
    t.equal(later.headers['idempotent-replayed'], undefined, 'not replayed after the window');
    t.not(later.json<{ id: number }>().id, first.json<{ id: number }>().id);
    await age(['key-expiring'], '2 days');
    t.equal(await purgeExpiredKeys(ctx.db, 1), 1, 'one expired key deleted');
    t.equal(await stored('key-expiring'), 0);
  });

  await t.test('each key keeps the window of the instance that stored it', async (t) => {
    const shortWindow = { ...testConfig, IDEMPOTENCY_TTL_SECONDS: 60 };
    const startShort = async () => {
      const app = await buildApp(shortWindow, { db: ctx.db, logger: false, limits: testLimits });
      t.teardown(() => app.close());
      await app.ready();
      return { ...ctx, app };
    };
    const short = await startShort();
    const kept = await post(ctx, { name: 'Kept a day', categoryId: 1 }, 'key-day');
    const forgotten = await post(short, { name: 'Kept a minute', categoryId: 1 }, 'key-minute');
    await age(['key-day', 'key-minute'], '2 minutes');
    // A short-window instance starting now purges at once.
    const restarted = await startShort();
    t.equal(await stored('key-day'), 1, "the short-window instance's purge leaves the day-long key");
    t.equal(await stored('key-minute'), 0, 'and deletes its own expired one');
    const replay = await post(restarted, { name: 'Kept a day', categoryId: 1 }, 'key-day');
    t.equal(replay.headers['idempotent-replayed'], 'true', 'the short-window instance replays the day-long key');
    t.equal(replay.body, kept.body);
    const retry = await post(ctx, { name: 'Kept a minute', categoryId: 1 }, 'key-minute');
    t.equal(retry.headers['idempotent-replayed'], undefined, 'the long-window instance honours the minute');
    t.not(retry.json<{ id: number }>().id, forgotten.json<{ id: number }>().id);
  });

  const setTarget = (key: string, target: string | null) =>
    ctx.db.query({ text: 'UPDATE idempotency_keys SET request_target = $2 WHERE key = $1' }, [key, target]);

  await t.test('a key answers one request: the same key and body at another target is a 422', async (t) => {
    await post(ctx, { name: 'Targeted', categoryId: 1 }, 'key-target');
    // As if the key had first been sent to another operation, under a parent.
    await setTarget('key-target', JSON.stringify({ operation: 'createNote', params: { petId: 1 } }));
    const other = await post(ctx, { name: 'Targeted', categoryId: 1 }, 'key-target');
    t.equal(other.statusCode, 422, 'not a replay of the answer the other operation stored');
    t.match(other.json(), { code: 'idempotency_key_reused', status: 422 });
    t.equal(await countNamed(ctx, 'Targeted'), 1);

    // The same operation under two parents: path parameters are part of the request.
    const { rows } = await ctx.db.query<{ id: number }>({ text: 'SELECT min(id) AS id FROM api_keys' });
    const apiKeyId = Number(rows[0]?.id);
    const runUnder = (petId: number) =>
      runIdempotently(
        ctx.db,
        { apiKeyId, key: 'key-parent' },
        { target: { operation: 'createPet', params: { petId } }, body: { text: 'x' }, ttlSeconds: 60 },
        () => Promise.resolve({ status: 201, body: JSON.stringify({ petId }), location: '' }),
      );
    t.match(await runUnder(1), { replayed: false });
    t.match(await runUnder(1), { replayed: true }, 'the same parent replays');
    t.same(await runUnder(2), { refused: 'reused' }, 'another parent is refused');
  });

  await t.test('a key stored before request targets were kept is judged by its body, as then', async (t) => {
    const first = await post(ctx, { name: 'Untargeted', categoryId: 1 }, 'key-untargeted');
    await setTarget('key-untargeted', null);
    const retry = await post(ctx, { name: 'Untargeted', categoryId: 1 }, 'key-untargeted');
    t.equal(retry.headers['idempotent-replayed'], 'true');
    t.equal(retry.body, first.body);
    const other = await post(ctx, { name: 'Other body', categoryId: 1 }, 'key-untargeted');
    t.equal(other.statusCode, 422);
  });

  await t.test("an older release's reuse of an expired key leaves no stale target behind", async (t) => {
    const { rows } = await ctx.db.query<{ id: number }>({ text: 'SELECT min(id) AS id FROM api_keys' });
    const scope = { apiKeyId: Number(rows[0]?.id), key: 'key-overwritten' };
    const runUnder = (petId: number, text: string) =>
      runIdempotently(
        ctx.db,
        scope,
        { target: { operation: 'createPet', params: { petId } }, body: { text }, ttlSeconds: 60 },
        () => Promise.resolve({ status: 201, body: JSON.stringify({ petId, text }), location: '' }),
      );
    // Stored an hour ago and expired since, as a key is when it is reused.
    const expire = () =>
      ctx.db.query(
        {
          text:
            "UPDATE idempotency_keys SET created_at = created_at - interval '1 hour', " +
            "target_written_at = target_written_at - interval '1 hour', expires_at = now() - interval '1 minute' " +
            'WHERE key = $1',
        },
        [scope.key],
      );
    t.match(await runUnder(1, 'first'), { replayed: false });
    await expire();
    // Release 1.2.0's store (before 0011): it knows nothing of the target and leaves it as it was.
    const secondAnswer = JSON.stringify({ petId: 2, text: 'second' });
    await ctx.db.query(
      {
        text:
          'INSERT INTO idempotency_keys ' +
          '(api_key_id, key, fingerprint, response_status, response_body, location, expires_at) ' +
          'VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) ON CONFLICT (api_key_id, key) DO UPDATE SET ' +
          'fingerprint = EXCLUDED.fingerprint, response_status = EXCLUDED.response_status, ' +
          'response_body = EXCLUDED.response_body, location = EXCLUDED.location, ' +
          'created_at = now(), expires_at = EXCLUDED.expires_at',
      },
      [scope.apiKeyId, scope.key, fingerprintOf({ text: 'second' }), 201, secondAnswer, '', 60],
    );
    const retry = await runUnder(2, 'second');
    t.match(retry, { replayed: true }, "a retry of the old release's request is its replay, not a 422");
    t.equal('answer' in retry ? retry.answer.body : undefined, secondAnswer);
    t.same(await runUnder(2, 'third'), { refused: 'reused' }, 'another body is still refused');

    // Reused again by this release: its target counts again.
    await expire();
    t.match(await runUnder(3, 'fourth'), { replayed: false });
    t.match(await runUnder(3, 'fourth'), { replayed: true });
    t.same(await runUnder(4, 'fourth'), { refused: 'reused' }, 'the same body at another target is refused again');
  });

  await t.test('20 concurrent identical requests create one pet; each gets its 201 or a 409', async (t) => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post(ctx, { name: 'Concurrent', categoryId: 1 }, 'key-concurrent')),
    );
    const created = answers.filter((res) => res.statusCode === 201);
    const inFlight = answers.filter((res) => res.statusCode === 409);
    t.equal(
      created.length + inFlight.length,
      20,
      `only 201 or 409 (got ${answers.map((r) => r.statusCode).join(',')})`,
    );
    t.ok(created.length >= 1);
    t.equal(new Set(created.map((res) => res.body)).size, 1, 'every 201 is the same pet');
    for (const res of inFlight) {
      t.same(Object.keys(res.json()).sort(), ['code', 'message', 'status']);
      t.match(res.json(), { code: 'idempotency_key_in_use', status: 409 });
    }
    t.equal(await countNamed(ctx, 'Concurrent'), 1, 'one pet');
    t.comment(`${backend}: ${created.length} × 201, ${inFlight.length} × 409`);
  });
});
