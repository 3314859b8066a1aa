import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { repoRoot } from '../../lib/repoRoot.js';
import { migrate } from '../../src/db/migrations.js';
import { listStatements } from '../../src/db/pets.js';
import { postgresUnavailableReason, scratchPostgresDatabase } from '../helpers/databases.js';

// The soak's situation: the table analysed small, then grown without an
// ANALYZE (autovacuum off), every new pet of one status. A page of another
// status must still read only its own rows, not walk the grown table.
const noPostgres = await postgresUnavailableReason();

interface PlanNode {
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
}

const spec = JSON.parse(readFileSync(join(repoRoot, 'src/generated/openapi.json'), 'utf8')) as {
  components: { schemas: { PetStatus: { enum: string[] } } };
};
const statuses = spec.components.schemas.PetStatus.enum;

t.test(
  'a page of each status reads a few index pages on a table grown past its statistics',
  { skip: noPostgres ?? false },
  async (t) => {
    const { db } = await scratchPostgresDatabase(t, 1);
    await migrate(db);
    await db.query({ text: 'ALTER TABLE pets SET (autovacuum_enabled = false)' });
    const insert = (from: number, to: number, status: string) =>
      db.query(
        {
          text: `INSERT INTO pets (name, category_id, status)
               SELECT 'pet ' || g, 1, coalesce($3, (ARRAY['available', 'pending', 'sold'])[1 + g % 3])
                 FROM generate_series($1::int, $2::int) AS g`,
        },
        [from, to, status === '' ? null : status],
      );
    const grown = 20_000;
    for (const status of statuses) {
      // CASCADE: a table that references pets (a resource under a pet) must not make this fail.
      await db.query({ text: 'TRUNCATE pets RESTART IDENTITY CASCADE' });
      await insert(1, 2000, '');
      await db.query({ text: 'ANALYZE pets' });
      // Every new pet of another status than the one paged.
      await insert(2001, 2000 + grown, statuses.find((other) => other !== status) ?? status);
      const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        { text: `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${listStatements.listByStatusAfter.text}` },
        [status, 2000, 21],
      );
      const plan = rows[0]!['QUERY PLAN'][0].Plan;
      const pages = plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
      // The primary key filtered by status walks all 20,000 new rows (hundreds of pages).
      t.ok(pages < 30, `status=${status} after the last analysed id: ${pages} pages read`);
    }
  },
);
