import t from 'tap';
import { insertPet, selectPetPage } from '../../src/db/pets.js';
import { openBackend, postgresUnavailableReason, type Backend } from '../helpers/databases.js';

// Both drivers parse int8 in the driver (int8ToNumber): rows come back as the
// records the handlers serve, numbers and all, and a value a number would
// round fails the query instead of reaching a client altered.
const noPostgres = await postgresUnavailableReason();

for (const backend of ['postgres', 'embedded'] as Backend[]) {
  const skip = backend === 'postgres' && noPostgres ? { skip: noPostgres } : {};
  t.test(`int8 on ${backend}`, skip, async (t) => {
    const { db, close } = await openBackend(backend);
    t.teardown(close);

    const created = await insertPet(db, { name: 'Rex', categoryId: 9007199254740991, status: 'sold' });
    t.same(Object.keys(created), ['id', 'name', 'categoryId', 'status'], 'a row is the record: its fields, no others');
    t.equal(typeof created.id, 'number', 'id is a number');
    t.equal(created.categoryId, 9007199254740991, 'the largest safe integer arrives exact');
    t.same(await selectPetPage(db, { afterId: 0, limit: 5 }), [created], 'a page holds the same records');

    const count = await db.query<{ n: number }>({ text: 'SELECT count(*) AS n FROM pets' });
    t.equal(count.rows[0]?.n, 1, 'any int8 is a number (count(*) too)');

    await t.rejects(
      db.query({ text: 'SELECT 9007199254740993::int8 AS n' }),
      /int8 value 9007199254740993 is not a safe integer/,
      'an int8 beyond 2^53 - 1 fails the query',
    );
    t.same((await db.query<{ one: number }>({ text: 'SELECT 1 AS one' })).rows, [{ one: 1 }], 'the next query works');
  });
}
