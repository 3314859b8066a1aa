import pg from 'pg';
import type { Statement } from './types.js';

type Parse = (text: string) => unknown;

/** A column of a RowDescription, as pg-protocol parses it. */
interface Field {
  name: string;
  dataTypeID: number;
  format: string;
}

/** A DataRow's values (text, or null for SQL NULL) made into the statement's row object. */
type BuildRow = (values: readonly (string | null)[]) => Record<string, unknown>;

/** What a statement's rows look like, learnt from its RowDescription once and kept. */
interface RowPlan {
  fields: readonly Field[];
  build: BuildRow;
}

/** The parts of pg's Query this subclass reads, sets or extends; its typings do not declare them. */
interface QueryInternals {
  _result: { rows: unknown[] };
  _canceledDueToError: Error | false;
  handleRowDescription(message: { fields: Field[] }): void;
  handleDataRow(message: { fields: (string | null)[] }): void;
}

const pgQuery = pg.Query.prototype as unknown as QueryInternals;

/**
 * Each statement's plan, kept with the statement object: the statements of
 * src/db are module constants that live as long as the process, and one made
 * on the fly (a script's, a test's) takes its plan with it when it goes, so
 * it compiles its row builder on each use: fine for a script, not for a
 * request path.
 */
const plans = new WeakMap<Statement, RowPlan>();

function sameFields(plan: RowPlan, fields: readonly Field[]): boolean {
  if (plan.fields.length !== fields.length) return false;
  for (let index = 0; index < fields.length; index++) {
    const known = plan.fields[index] as Field;
    const field = fields[index] as Field;
    if (known.name !== field.name || known.dataTypeID !== field.dataTypeID || known.format !== field.format)
      return false;
  }
  return true;
}

/**
 * A property key in the row's object literal. Quoted with JSON.stringify, so
 * a column name (the server's, from the statement's own aliases) is always
 * a string literal, never code; `__proto__` is computed, which makes it an
 * own property like any other column, where a plain literal key would set
 * the row's prototype.
 */
function keyOf(name: string): string {
  const quoted = JSON.stringify(name);
  return name === '__proto__' ? `[${quoted}]` : quoted;
}

/**
 * The plan's row builder: one object literal with the columns in order, each
 * parsed by its own parser. Generated once per plan, as ajv and
 * fast-json-stringify generate theirs: every row of a statement then comes
 * from one literal (one shape, no copy of a template) and each column's
 * parser is a call V8 can inline. The loop it replaces, one call site for
 * every parser of every statement, took about three times as long per row.
 * Only names and positions are written into the code; the parsers are
 * passed in as values.
 */
function rowBuilderOf(names: readonly string[], parsers: readonly Parse[]): BuildRow {
  const columns = names.map((name, index) => `${keyOf(name)}: v[${index}] == null ? null : p${index}(v[${index}])`);
  const parameters = parsers.map((_, index) => `p${index}`);
  const source = `'use strict'; return function row(v) { return { ${columns.join(', ')} }; };`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the point: code made from names quoted as literals (keyOf)
  const builderFactory = new Function(...parameters, source) as (...values: Parse[]) => BuildRow;
  return builderFactory(...parsers);
}

function planOf(fields: readonly Field[], parserOf: (oid: number) => Parse): RowPlan {
  const names = fields.map((field) => field.name);
  const parsers = fields.map((field) => parserOf(field.dataTypeID));
  return { fields, build: rowBuilderOf(names, parsers) };
}

/**
 * A statement's rows built from a plan kept per statement. pg's Query
 * sets its row template up again on every RowDescription (once per
 * execution: a dictionary object filled field by field, then copied, with
 * a parser looked up per column), and emits a 'row' event per row; under
 * load that was the largest self time of our own request path in a getPet
 * profile. Here a statement's plan (with its row builder) is made once, and
 * each RowDescription is only compared with it (a changed column gets a new
 * plan). Text columns only (this service never asks for binary); anything
 * else is left to pg. pg's submission, callback and error handling are its own.
 */
export class StatementQuery extends pg.Query {
  private plan: RowPlan | undefined;

  constructor(
    private readonly statement: Statement,
    values: unknown[],
    callback: (error: Error | undefined, result: pg.QueryResult) => void,
    private readonly parserOf: (oid: number) => Parse,
  ) {
    super(statement.text, values, callback);
  }

  handleRowDescription(message: { fields: Field[] }): void {
    const fields = message.fields;
    if (fields.some((field) => field.format !== 'text')) {
      this.plan = undefined;
      pgQuery.handleRowDescription.call(this, message);
      return;
    }
    let plan = plans.get(this.statement);
    if (plan === undefined || !sameFields(plan, fields)) {
      plan = planOf(fields, this.parserOf);
      plans.set(this.statement, plan);
    }
    this.plan = plan;
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    const plan = this.plan;
    if (plan === undefined) {
      pgQuery.handleDataRow.call(this, message);
      return;
    }
    const internals = this as unknown as QueryInternals;
    if (internals._canceledDueToError) return;
    let row: Record<string, unknown>;
    try {
      row = plan.build(message.fields);
    } catch (error) {
      // As pg does: the query fails with the parser's error once the server is ready again.
      internals._canceledDueToError = error as Error;
      return;
    }
    internals._result.rows.push(row);
  }
}
