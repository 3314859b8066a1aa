import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { emptyStore } from '../helpers/emptyStore.js';

// The fixture the stateful suites start each sequence with: a table that references pets (as the recipe's
// resources under a pet do) neither makes it fail nor keeps its rows; the keys a test signs in with stay.
t.test('emptyStore empties every table, one that references pets too, and keeps the API keys', async (t) => {
  const { db, app, auth } = await startTestApp(t, 'embedded');
  await db.query({ text: 'CREATE TABLE pet_marks (pet_id bigint NOT NULL REFERENCES pets (id), mark text)' });
  const created = await app.inject({
    method: 'POST',
    url: '/v1/pets',
    headers: { ...auth, 'content-type': 'application/json' },
    payload: { name: 'marked', categoryId: 1 },
  });
  t.equal(created.statusCode, 201);
  await db.query({ text: "INSERT INTO pet_marks SELECT id, 'x' FROM pets" });
  await emptyStore(db);
  const count = async (table: string) =>
    Number((await db.query<{ n: string }>({ text: `SELECT count(*) AS n FROM ${table}` })).rows[0]!.n);
  t.equal(await count('pets'), 0, 'pets emptied');
  t.equal(await count('pet_marks'), 0, 'and what references them');
  t.ok((await count('api_keys')) > 0, 'the keys stay');
  const listed = await app.inject({ method: 'GET', url: '/v1/pets', headers: auth });
  t.equal(listed.statusCode, 200, 'the key still signs in');
});
