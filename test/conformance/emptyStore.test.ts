import t, { type Test } from 'tap';
import { startTestApp } from '../helpers/app.js';
import { postgresUnavailableReason, type Backend } from '../helpers/databases.js';
import { emptyStore } from '../helpers/emptyStore.js';

// The fixture the stateful suites start each sequence with: a table that references pets (as the recipe's
// resources under a pet do) neither makes it fail nor keeps its rows; ids start again at 1, as on a fresh
// deployment; the keys a test signs in with stay. Tables whose foreign keys form a cycle are emptied too.

async function emptiesOn(t: Test, backend: Backend) {
  const { db, app, auth } = await startTestApp(t, backend);
  const createPet = (name: string) =>
    app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: { name, categoryId: 1 },
    });
  await db.query({
    text: 'CREATE TABLE pet_marks (id serial PRIMARY KEY, pet_id bigint NOT NULL REFERENCES pets (id), mark text)',
  });
  const count = async (table: string) =>
    Number((await db.query<{ n: string }>({ text: `SELECT count(*) AS n FROM ${table}` })).rows[0]!.n);

  for (const name of ['marked', 'second']) t.equal((await createPet(name)).statusCode, 201);
  await db.query({ text: "INSERT INTO pet_marks (pet_id, mark) SELECT id, 'x' FROM pets" });
  t.equal(await emptyStore(db), 'deleted', 'by DELETE, children first (no TRUNCATE: a new file per table)');
  t.equal(await count('pets'), 0, 'pets emptied');
  t.equal(await count('pet_marks'), 0, 'and what references them');
  t.ok((await count('api_keys')) > 0, 'the keys stay');
  const again = await createPet('after');
  t.equal(again.statusCode, 201, 'the key still signs in');
  t.equal(again.json().id, 1, "a pet made after it gets id 1: the table's identity starts again");
  await db.query({ text: "INSERT INTO pet_marks (pet_id, mark) VALUES (1, 'y')" });
  t.equal(
    (await db.query<{ id: number }>({ text: 'SELECT id FROM pet_marks' })).rows[0]!.id,
    1,
    'and a serial column of a table the spec grew',
  );

  await db.query({ text: 'CREATE TABLE hen (id int PRIMARY KEY, egg_id int)' });
  await db.query({ text: 'CREATE TABLE egg (id int PRIMARY KEY, hen_id int REFERENCES hen (id))' });
  await db.query({ text: 'ALTER TABLE hen ADD FOREIGN KEY (egg_id) REFERENCES egg (id)' });
  await db.query({ text: 'INSERT INTO hen VALUES (1, NULL)' });
  await db.query({ text: 'INSERT INTO egg VALUES (1, 1)' });
  await db.query({ text: 'UPDATE hen SET egg_id = 1' });
  t.equal(await emptyStore(db), 'truncated', 'a cycle of foreign keys: by TRUNCATE');
  t.same([await count('hen'), await count('egg'), await count('pets')], [0, 0, 0], 'tables in a cycle of foreign keys');
  t.equal((await createPet('last')).json().id, 1, 'ids start at 1 then too');
}

t.test('emptyStore on the embedded database', (t) => emptiesOn(t, 'embedded'));

const noPostgres = await postgresUnavailableReason();
t.test('emptyStore on PostgreSQL', { skip: noPostgres ?? false }, (t) => emptiesOn(t, 'postgres'));
