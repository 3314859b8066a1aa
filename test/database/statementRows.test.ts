import t from 'tap';
import type { Statement } from '../../src/db/types.js';
import { postgresUnavailableReason, scratchPostgresDatabase } from '../helpers/databases.js';

// On PostgreSQL a statement's rows are built from a plan kept per statement
// (src/db/statementQuery.ts), which reads and sets parts of pg's Query that
// its typings do not declare. These checks fail if a pg release changes them.
const noPostgres = await postgresUnavailableReason();

t.test(
  'rows from a kept plan: every type as pg parses it, the plan renewed when the columns change',
  { skip: noPostgres ?? false },
  async (t) => {
    const { db } = await scratchPostgresDatabase(t, 1);
    const typed: Statement = {
      name: 'test.typed',
      text: `SELECT $1::int8 AS big, 7::int4 AS small, 'x'::text AS name, true AS yes, 1.5::float8 AS ratio,
      '2026-01-02T03:04:05Z'::timestamptz AS at, ARRAY['a','b']::text[] AS tags, '{"k":1}'::jsonb AS doc,
      NULL::text AS nothing`,
    };
    const expected = {
      big: 9007199254740991,
      small: 7,
      name: 'x',
      yes: true,
      ratio: 1.5,
      at: new Date('2026-01-02T03:04:05Z'),
      tags: ['a', 'b'],
      doc: { k: 1 },
      nothing: null,
    };
    for (let run = 0; run < 2; run += 1) {
      const { rows } = await db.query(typed, [Number.MAX_SAFE_INTEGER]);
      t.same(rows, [expected], `run ${run + 1}: the columns parsed as pg parses them, int8 as a number`);
    }

    const tooBig = db.query(typed, ['9007199254740993']);
    await t.rejects(tooBig, /not a safe integer/, "a parser's error fails the statement, as pg's own rows do");
    t.same((await db.query(typed, [1])).rows, [{ ...expected, big: 1 }], 'and the connection serves the next one');

    await db.query({ text: 'CREATE TABLE shapes (id int8 PRIMARY KEY, label text)' });
    await db.query({ text: "INSERT INTO shapes VALUES (1, 'one'), (2, NULL)" });
    const every: Statement = { text: 'SELECT * FROM shapes WHERE id >= $1 ORDER BY id' };
    const before = (await db.query<Record<string, unknown>>(every, [1])).rows;
    t.same(before, [
      { id: 1, label: 'one' },
      { id: 2, label: null },
    ]);
    await db.query({ text: 'ALTER TABLE shapes ADD COLUMN weight float8 DEFAULT 2.5' });
    t.same(
      (await db.query(every, [1])).rows,
      [
        { id: 1, label: 'one', weight: 2.5 },
        { id: 2, label: null, weight: 2.5 },
      ],
      'a column added since: a new plan',
    );

    // Column names are written into each plan's row builder: as data, whatever they hold.
    const oddNames: Statement = {
      name: 'test.odd_names',
      text: `SELECT '{"k": 1}'::jsonb AS "__proto__", 'q' AS "a""b\\c", 'r' AS "x}; throw 1; //", 2::int8 AS "constructor"`,
    };
    const [odd] = (await db.query<Record<string, unknown>>(oddNames)).rows;
    t.same(
      odd && Object.entries(odd),
      [
        ['__proto__', { k: 1 }],
        ['a"b\\c', 'q'],
        ['x}; throw 1; //', 'r'],
        ['constructor', 2],
      ],
      'names that are not identifiers are keys like any other, in order, as own properties',
    );
    t.equal(odd && Object.getPrototypeOf(odd), Object.prototype, 'a column named __proto__ sets no prototype');
  },
);
