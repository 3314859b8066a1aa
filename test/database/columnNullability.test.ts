import t from 'tap';
import { petNullsKept } from '../../src/db/pets.js';
import { loadOpenApiDocument, type OpenApiDocument } from '../../src/openapi/document.js';
import { openBackend } from '../helpers/databases.js';

// Each column of a table behind an API schema (pets behind Pet: the table's name made singular and
// PascalCase) against its property (the column's name in camelCase), on the migrated database: a
// column that may be NULL backs an optional property (src/db/records.ts leaves the NULL out) or one
// whose schema admits null (kept, and listed in its table's nullsKept); a NOT NULL column may back
// anything. Columns with no property (created_at) are the service's own.

/**
 * Each API table's properties whose NULL is answered as null: `<record>NullsKept` exported by
 * src/db/<table>.ts (petNullsKept for pets), found by that name so a new table needs no line here;
 * a table that exports none keeps no NULL.
 */
async function nullsKeptOf(tables: Iterable<string>): Promise<Record<string, ReadonlySet<string>>> {
  const found: Record<string, ReadonlySet<string>> = {};
  for (const table of tables) {
    const name = schemaNameOf(table);
    const exported = `${name.charAt(0).toLowerCase()}${name.slice(1)}NullsKept`;
    const module = (await import(`../../src/db/${table}.js`).catch(() => ({}))) as Record<string, unknown>;
    const kept = module[exported];
    found[table] = kept instanceof Set ? (kept as ReadonlySet<string>) : new Set();
  }
  return found;
}

interface Column {
  table: string;
  column: string;
  nullable: boolean;
}
type Schema = Record<string, unknown>;

const schemasOf = (spec: OpenApiDocument) => (spec.components as { schemas?: Record<string, Schema> }).schemas ?? {};

const camelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
const schemaNameOf = (table: string) => camelCase(`_${table}`).replace(/s$/, '');

function resolve(spec: OpenApiDocument, schema: Schema): Schema {
  const name = /^#\/components\/schemas\/(.+)$/.exec(String(schema['$ref'] ?? ''))?.[1];
  return name === undefined ? schema : resolve(spec, schemasOf(spec)[name] as Schema);
}

/** Whether a value of null passes the schema (type, const, enum, and the applicators that combine them). */
function admitsNull(spec: OpenApiDocument, given: Schema): boolean {
  const schema = resolve(spec, given);
  const branches = (key: string) => (schema[key] as Schema[] | undefined) ?? [];
  if (schema['anyOf'] !== undefined || schema['oneOf'] !== undefined)
    return [...branches('anyOf'), ...branches('oneOf')].some((branch) => admitsNull(spec, branch));
  if (branches('allOf').some((branch) => !admitsNull(spec, branch))) return false;
  if ('const' in schema) return schema['const'] === null;
  if (Array.isArray(schema['enum'])) return schema['enum'].includes(null);
  const type = schema['type'];
  return type === undefined || type === 'null' || (Array.isArray(type) && type.includes('null'));
}

/** What is wrong between the columns and the spec; empty when every column fits its property. */
function mismatches(
  spec: OpenApiDocument,
  columns: readonly Column[],
  keptByTable: Record<string, ReadonlySet<string>>,
): string[] {
  const found: string[] = [];
  for (const { table, column, nullable } of columns) {
    const schema = schemasOf(spec)[schemaNameOf(table)];
    if (schema === undefined) continue;
    const property = camelCase(column);
    const propertySchema = (schema['properties'] as Record<string, Schema> | undefined)?.[property];
    if (propertySchema === undefined) continue;
    const where = `${table}.${column} (${schemaNameOf(table)}.${property})`;
    const required = ((schema['required'] as string[] | undefined) ?? []).includes(property);
    const nullAllowed = admitsNull(spec, propertySchema);
    const kept = keptByTable[table] ?? new Set<string>();
    if (nullable && required && !nullAllowed)
      found.push(`${where}: may be NULL, but the property is required and its schema refuses null`);
    if (kept.has(property) !== nullAllowed)
      found.push(
        `${where}: its schema ${nullAllowed ? 'admits' : 'refuses'} null, so nullsKept must ${nullAllowed ? '' : 'not '}list it`,
      );
  }
  return found;
}

t.test('every column behind an API schema fits its property, NULL and all', async (t) => {
  const opened = await openBackend('embedded');
  t.teardown(() => opened.close());
  const { rows } = await opened.db.query<{ table: string; column: string; nullable: string }>({
    text: `SELECT table_name AS "table", column_name AS "column", is_nullable AS nullable
             FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY 1, ordinal_position`,
  });
  const columns = rows.map((row) => ({ ...row, nullable: row.nullable === 'YES' }));
  const spec = loadOpenApiDocument();
  const kept = await nullsKeptOf(new Set(columns.map((column) => column.table)));
  t.equal(kept['pets'], petNullsKept, "pets' NULLs kept are src/db/pets.ts's petNullsKept");
  t.ok(
    columns.some((column) => column.table === 'pets' && column.column === 'category_id'),
    'pets is read',
  );
  t.same(mismatches(spec, columns, kept), [], 'the migrated database and openapi.yaml agree');

  // The check bites: a nullable column behind a required property, and a schema admitting null
  // whose NULL src/db would drop.
  const nullableName = columns.map((column) =>
    column.table === 'pets' && column.column === 'name' ? { ...column, nullable: true } : column,
  );
  t.match(mismatches(spec, nullableName, kept), [/pets\.name \(Pet\.name\): may be NULL/]);
  const nullableStatus = structuredClone(spec);
  schemasOf(nullableStatus)['PetStatus'] = { type: ['string', 'null'] };
  t.match(mismatches(nullableStatus, columns, kept), [/pets\.status \(Pet\.status\): its schema admits null/]);
});
