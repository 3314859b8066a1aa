import type { Database, Queryable } from '../../src/db/index.js';

/**
 * Empties what the API stores, whatever tables the spec's resources grew: every table of the schema but the
 * keys a test authenticates with and the migrations' ledger, with their ids starting again at 1, as on a
 * fresh deployment (so a schema bounding them holds), so that a new table, or a foreign key between two,
 * cannot make a fixture fail or leave rows a model does not know.
 *
 * DELETE, children before parents, and setval for each table's own sequences, in one transaction: a
 * TRUNCATE gives every table and index a new file. Measured here on openapi.yaml's tables, a row inserted
 * then the store emptied, 50 times: 32-35 ms a turn by TRUNCATE on PostgreSQL, 14-29 ms on PGlite, against
 * 5-7 ms this way. The stateful suites empty the store before every sequence: 875 sequences for one test
 * on the worked examples' tree. Tables whose foreign keys form a cycle, or that a kept table references,
 * are emptied by TRUNCATE ... RESTART IDENTITY CASCADE.
 */
const keptByDefault = ['api_keys', 'schema_migrations'];

interface StoreTable {
  /** The table's name, quoted for SQL. */
  name: string;
  /** The other tables of the store its foreign keys reference, quoted. */
  parents: string[];
  /** Its sequences (identity and serial columns), schema-qualified and quoted, with their start values. */
  sequences: { name: string; start: string }[];
}

const storeTables = `
  SELECT format('%I', c.relname) AS name,
    ARRAY(SELECT format('%I', p.relname) FROM pg_constraint f JOIN pg_class p ON p.oid = f.confrelid
          WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid) AS parents,
    COALESCE((SELECT json_agg(json_build_object('name', format('%I.%I', n.nspname, s.relname), 'start', q.seqstart::text))
              FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
              JOIN pg_namespace n ON n.oid = s.relnamespace JOIN pg_sequence q ON q.seqrelid = s.oid
              WHERE d.refobjid = c.oid AND d.classid = 'pg_class'::regclass
                AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')), '[]'::json) AS sequences
  FROM pg_class c
  WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
    AND NOT (c.relname = ANY ($1::text[]))`;

/** The tables in an order that deletes every child before its parents, or undefined for a cycle. */
function childrenFirst(tables: StoreTable[]): StoreTable[] | undefined {
  const ordered: StoreTable[] = [];
  let left = tables;
  while (left.length > 0) {
    const referenced = new Set(left.flatMap((table) => table.parents));
    const free = left.filter((table) => !referenced.has(table.name));
    if (free.length === 0) return undefined;
    ordered.push(...free);
    left = left.filter((table) => !free.includes(table));
  }
  return ordered;
}

async function deleteChildrenFirst(tx: Queryable, tables: StoreTable[]): Promise<void> {
  for (const table of tables) await tx.query({ text: `DELETE FROM ${table.name}` });
  for (const sequence of tables.flatMap((table) => table.sequences))
    await tx.query({ text: 'SELECT setval($1::regclass, $2::bigint, false)' }, [sequence.name, sequence.start]);
}

export interface EmptyStoreOptions {
  /** The tables left as they are (by default the API keys and the migrations' ledger). */
  keep?: readonly string[];
  /**
   * TRUNCATE whatever the tables hold. For a database one test hands to the next: a test may have written
   * thousands of rows, which a DELETE leaves as dead rows for every later query to step over (nothing
   * vacuums a test database).
   */
  truncate?: boolean;
}

/** Empties the store (above); says how: the fast way, or TRUNCATE where that cannot (or was asked for). */
export async function emptyStore(db: Database, options: EmptyStoreOptions = {}): Promise<'deleted' | 'truncated'> {
  const { rows } = await db.query<StoreTable>({ text: storeTables }, [options.keep ?? keptByDefault]);
  if (rows.length === 0) return 'deleted';
  const ordered = options.truncate ? undefined : childrenFirst(rows);
  if (ordered) {
    try {
      await db.transaction((tx) => deleteChildrenFirst(tx, ordered));
      return 'deleted';
    } catch {
      // A kept table references one of these (a DELETE would orphan its rows): TRUNCATE's CASCADE empties it too.
    }
  }
  await db.query({ text: `TRUNCATE ${rows.map((row) => row.name).join(', ')} RESTART IDENTITY CASCADE` });
  return 'truncated';
}
