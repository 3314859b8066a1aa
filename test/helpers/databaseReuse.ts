import type { Database } from '../../src/db/index.js';
import { emptyStore } from './emptyStore.js';

/**
 * What a test can change of a database besides its rows, as one digest: the schema's tables, columns,
 * defaults, constraints, indexes, triggers, functions, types and sequences, their privileges and storage
 * options, the schemas and extensions there are, the database's own settings, and the migrations' ledger.
 * Equal digests before and after a test mean that emptying its rows makes it a fresh database again.
 */
const fingerprintQuery = `
  WITH here AS (SELECT current_schema()::regnamespace AS ns)
  SELECT md5(concat_ws(E'\\n',
    (SELECT string_agg(format('%s %s %s %s', c.relname, c.relkind, c.reloptions, c.relacl), E'\\n' ORDER BY c.relname)
       FROM pg_class c, here WHERE c.relnamespace = here.ns),
    (SELECT string_agg(format('%s.%s %s %s %s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                              a.attnotnull, a.attidentity, a.attgenerated, pg_get_expr(d.adbin, d.adrelid)),
                       E'\\n' ORDER BY c.relname, a.attnum)
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum, here
       WHERE c.relnamespace = here.ns AND a.attnum > 0 AND NOT a.attisdropped),
    (SELECT string_agg(format('%s %s %s', o.conrelid::regclass, o.conname, pg_get_constraintdef(o.oid)),
                       E'\\n' ORDER BY o.conrelid::regclass::text, o.conname)
       FROM pg_constraint o, here WHERE o.connamespace = here.ns),
    (SELECT string_agg(pg_get_indexdef(i.indexrelid), E'\\n' ORDER BY i.indexrelid::regclass::text)
       FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid, here WHERE c.relnamespace = here.ns),
    (SELECT string_agg(pg_get_triggerdef(g.oid), E'\\n' ORDER BY g.tgname)
       FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid, here
       WHERE NOT g.tgisinternal AND c.relnamespace = here.ns),
    (SELECT string_agg(format('%s(%s) %s %s', p.proname, pg_get_function_identity_arguments(p.oid), md5(p.prosrc),
                              p.proacl), E'\\n' ORDER BY 1)
       FROM pg_proc p, here WHERE p.pronamespace = here.ns),
    (SELECT string_agg(format('%s %s %s', t.typname, t.typtype,
                              (SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e
                               WHERE e.enumtypid = t.oid)), E'\\n' ORDER BY t.typname)
       FROM pg_type t, here WHERE t.typnamespace = here.ns AND t.typtype IN ('c', 'd', 'e', 'r')),
    (SELECT string_agg(format('%s %s %s %s %s %s', s.seqrelid::regclass, s.seqtypid::regtype, s.seqstart,
                              s.seqincrement, s.seqmin, s.seqmax), E'\\n' ORDER BY s.seqrelid::regclass::text)
       FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid, here WHERE c.relnamespace = here.ns),
    (SELECT string_agg(format('%s %s', nspname, nspacl), ',' ORDER BY nspname) FROM pg_namespace),
    (SELECT string_agg(extname || ' ' || extversion, ',' ORDER BY extname) FROM pg_extension),
    (SELECT string_agg(array_to_string(setconfig, ','), ';' ORDER BY setrole) FROM pg_db_role_setting
       WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())),
    (SELECT string_agg(format('%s %s', version, name), ',' ORDER BY version) FROM schema_migrations)
  )) AS fingerprint`;

/** The digest above of the database as it is now. */
export async function schemaFingerprint(db: Database): Promise<string> {
  const { rows } = await db.query<{ fingerprint: string }>({ text: fingerprintQuery });
  return rows[0]!.fingerprint;
}

/**
 * What one session can hold past a test besides the schema: its settings, temporary tables, sequences'
 * cached values, prepared statements, cursors and advisory locks. Not UNLISTEN: the embedded database
 * hears key changes on its one session for as long as it is open.
 */
const sessionReset = `RESET ALL; DISCARD TEMP; DISCARD SEQUENCES; DEALLOCATE ALL; CLOSE ALL;
  SELECT pg_advisory_unlock_all();`;

/**
 * Makes a database a test has used as good as a new copy, or says it cannot: every table emptied but the
 * migrations' ledger (the API keys too), ids from 1 again, the session's state dropped, and the schema
 * still the one it was handed out with (pristine: schemaFingerprint then). False when the test changed
 * the schema (a test of stored values alters a column) or left the database unusable: a new copy serves then.
 */
export async function readyForReuse(db: Database, pristine: string): Promise<boolean> {
  try {
    await emptyStore(db, { keep: ['schema_migrations'], truncate: true });
    if (db.kind === 'embedded') await db.execScript(sessionReset);
    return (await schemaFingerprint(db)) === pristine;
  } catch {
    return false;
  }
}
