/**
 * Where rows become API-shaped records. A column may be NULL where its
 * property is optional (`nickname?: string`), and a schema that does not
 * admit null refuses `"nickname": null`: answered as it came, the row would
 * fail response validation, a 500 after the write it answers had committed.
 * So a NULL is dropped, the property left out, unless the property's schema
 * admits null (`nullsKept`: then null is its value). The rows the driver
 * built are changed in place: a page is returned without a copy.
 * test/database/columnNullability.test.ts holds each column's nullability
 * to its property's schema, and `nullsKept` to the schemas that admit null.
 */
export function asRecords<Row extends object>(rows: Row[], nullsKept: ReadonlySet<string>): Row[] {
  for (const row of rows) asRecord(row, nullsKept);
  return rows;
}

function asRecord(row: object, nullsKept: ReadonlySet<string>): void {
  const fields = row as Record<string, unknown>;
  for (const key in fields) {
    if (fields[key] === null && !nullsKept.has(key)) Reflect.deleteProperty(fields, key);
  }
}
