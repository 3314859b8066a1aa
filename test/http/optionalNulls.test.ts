import t from 'tap';
import { forEachBackend, startTestApp } from '../helpers/app.js';

// A NULL in a column behind an optional property (Pet's `status` here, its column made nullable on
// the test's own database) is answered without the property: every read, and the answer of a create
// whose row came back with it, is a 200 or 201 that fits the schema, never a 500 after the commit.

const nullableStatus = [
  'ALTER TABLE pets ALTER COLUMN status DROP NOT NULL',
  // What a new optional column is for a row that never had it: NULL, on the row a create returns too.
  `CREATE FUNCTION pets_without_status() RETURNS trigger LANGUAGE plpgsql AS
     $$ BEGIN NEW.status := NULL; RETURN NEW; END $$`,
  'CREATE TRIGGER pets_without_status BEFORE INSERT ON pets FOR EACH ROW EXECUTE FUNCTION pets_without_status()',
];

t.test('an optional property whose column is NULL is left out of every answer', (t) =>
  forEachBackend(t, async (t, backend) => {
    const { app, db, auth } = await startTestApp(t, backend);
    for (const text of nullableStatus) await db.query({ text });
    const created = await app.inject({
      method: 'POST',
      url: '/v1/pets',
      headers: auth,
      payload: { name: 'Nameless', categoryId: 1 },
    });
    t.equal(created.statusCode, 201, 'the create answers its committed row');
    const id = Number(created.json().id);
    const pet = { id, name: 'Nameless', categoryId: 1 };
    t.same(created.json(), pet, 'without status');
    for (const url of [`/v1/pets/${id}`, `/v1/pets?id=${id}`, `/v1/pets?limit=100`]) {
      const res = await app.inject({ method: 'GET', url, headers: auth });
      t.equal(res.statusCode, 200, url);
      const found: unknown = res.json();
      t.same(Array.isArray(found) ? found.find((item: { id: number }) => item.id === id) : found, pet, url);
    }
  }),
);
