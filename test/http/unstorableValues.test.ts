import t from 'tap';
import { UnstorableValueError } from '../../src/db/index.js';
import { forEachBackend } from '../helpers/app.js';
import { openBackend } from '../helpers/databases.js';
import { startLoggedApp } from '../helpers/loggedApp.js';

// Values a schema can allow and PostgreSQL cannot hold (SQLSTATE class 22). openapi.yaml's
// bounds keep today's operations clear of them; these tests make the storage narrower than
// the schema, as a new operation's migration could, and check the answer is a 400 Error object.

t.test('values PostgreSQL cannot store', (t) =>
  forEachBackend(t, async (t, backend) => {
    const opened = await openBackend(backend);
    t.teardown(() => opened.close());
    const { db } = opened;
    const { app, auth, logs } = await startLoggedApp(t, db);

    await t.test('every value PostgreSQL refuses is an UnstorableValueError, never a raw driver error', async (t) => {
      const refused: Array<[string, unknown, string]> = [
        ['SELECT $1::date', '0000-01-01', '22008'],
        ['SELECT $1::timestamptz', '0000-01-01T00:00:00Z', '22008'],
        ['SELECT $1::timestamptz', '2024-01-01T00:00:00+16:00', '22009'],
        ['SELECT $1::int8', '9223372036854775808', '22003'],
        ['SELECT $1::int4', 2147483648, '22003'],
        ['SELECT $1::text', 'a\u0000b', '22021'],
        ['SELECT $1::jsonb', '"\\u0000"', '22P05'],
        ['SELECT $1::uuid', 'urn:uuid:123e4567-e89b-12d3-a456-426614174000', '22P02'],
      ];
      for (const [text, value, sqlState] of refused) {
        const error = await db.query({ text }, [value]).then(
          () => undefined,
          (failure: unknown) => failure,
        );
        t.type(error, UnstorableValueError, text);
        t.equal((error as UnstorableValueError).sqlState, sqlState, text);
      }
      await t.rejects(
        db.transaction((tx) => tx.query({ text: 'SELECT $1::date' }, ['0000-01-01'])),
        UnstorableValueError,
        'in a transaction',
      );
    });

    await t.test('a value the schema allows and a column cannot hold answers 400 invalid_request', async (t) => {
      await db.execScript(
        'ALTER TABLE pets ALTER COLUMN category_id TYPE integer; ALTER TABLE pets ALTER COLUMN name TYPE varchar(5);' +
          "ALTER TABLE pets ADD CONSTRAINT no_zed CHECK (name NOT LIKE 'Z%')",
      );
      const create = (body: unknown, headers: Record<string, string> = {}) =>
        app.inject({ method: 'POST', url: '/v1/pets', headers: { ...auth, ...headers }, payload: body as object });
      const cases: Array<[unknown, RegExp]> = [
        [{ name: 'Rex', categoryId: 2 ** 31 }, /a number outside the range the service can store/],
        [{ name: 'Rexford', categoryId: 3 }, /a text longer than the service can store/],
        [{ name: 'Zed', categoryId: 3 }, /a value outside what the service can store/],
      ];
      for (const [body, message] of cases) {
        const res = await create(body);
        t.equal(res.statusCode, 400, JSON.stringify(body));
        t.same(Object.keys(res.json() as object).sort(), ['code', 'message', 'status']);
        t.match(res.json(), { code: 'invalid_request', status: 400, message });
        t.ok(res.headers['x-request-id'], 'X-Request-Id');
      }
      const keyed = await create({ name: 'Rex', categoryId: 2 ** 31 }, { 'idempotency-key': 'unstorable-1' });
      t.equal(keyed.statusCode, 400, 'with an Idempotency-Key too');
      const retried = await create({ name: 'Rex', categoryId: 3 }, { 'idempotency-key': 'unstorable-1' });
      t.equal(retried.statusCode, 201, 'the refused request stored nothing under its key');
      const list = await app.inject({ method: 'GET', url: '/v1/pets', headers: auth });
      t.equal(list.statusCode, 200, 'the connection that met the refusal still serves');
      const refusals = logs().filter((line) => line['msg'] === 'value refused by the database');
      t.same(
        refusals.map((line) => line['sqlState']),
        ['22003', '22001', '23514', '22003'],
        "a warn line per refusal, with PostgreSQL's SQLSTATE",
      );
      t.match(refusals[0], { level: 40, detail: /PostgreSQL refused a value: .*integer/ });
      t.notOk(
        logs().some((line) => line['msg'] === 'request failed'),
        'no request failed (500)',
      );
    });
  }),
);
