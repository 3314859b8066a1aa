import type { Database } from '../../src/db/index.js';

/**
 * Empties what the API stores, whatever tables the spec's resources grew: every table of the schema but the
 * keys a test authenticates with and the migrations' ledger, in one TRUNCATE ... RESTART IDENTITY CASCADE (ids
 * start again at 1, as on a fresh deployment, so a schema bounding them holds), so that a new
 * table, or a foreign key between two, cannot make a fixture fail or leave rows a model does not know.
 */
const kept = ['api_keys', 'schema_migrations'];

export async function emptyStore(db: Database): Promise<void> {
  const { rows } = await db.query<{ name: string }>(
    {
      text: `SELECT format('%I', tablename) AS name FROM pg_tables
              WHERE schemaname = current_schema() AND NOT (tablename = ANY ($1::text[]))`,
    },
    [kept],
  );
  if (rows.length > 0)
    await db.query({ text: `TRUNCATE ${rows.map((row) => row.name).join(', ')} RESTART IDENTITY CASCADE` });
}
