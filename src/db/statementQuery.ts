import pg from 'pg';
import type { Statement } from './types.js';

type Parse = (text: string) => unknown;

/** A column of a RowDescription, as pg-protocol parses it. */
interface Field {
  name: string;
  dataTypeID: number;
  format: string;
}

/** What a statement's rows look like, learnt from its RowDescription once and kept. */
interface RowPlan {
  fields: readonly Field[];
  names: readonly string[];
  parsers: readonly Parse[];
  /** Every column set to null: each row is a copy of it, so all rows of a statement share one shape. */
  template: Readonly<Record<string, null>>;
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
 * src/db live as long as the process, and one made on the fly (a script's,
 * a test's) takes its plan with it when it goes.
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

function planOf(fields: readonly Field[], parserOf: (oid: number) => Parse): RowPlan {
  const template: Record<string, null> = {};
  for (const field of fields) template[field.name] = null;
  return {
    fields,
    names: fields.map((field) => field.name),
    parsers: fields.map((field) => parserOf(field.dataTypeID)),
    template,
  };
}

/**
 * A statement's rows built from a plan kept per statement. pg's Query
 * sets its row template up again on every RowDescription (once per
 * execution: a dictionary object filled field by field, then copied, with
 * a parser looked up per column), and emits a 'row' event per row; under
 * load that was the largest self time of our own request path in a getPet
 * profile. Here a statement's plan is made once, and each RowDescription is
 * only compared with it (a changed column gets a new plan). Text columns
 * only (this service never asks for binary); anything else is left to pg.
 * pg's submission, callback and error handling are its own.
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
    const row: Record<string, unknown> = { ...plan.template };
    const values = message.fields;
    try {
      for (let index = 0; index < values.length; index++) {
        const value = values[index];
        row[plan.names[index] as string] =
          value === null || value === undefined ? null : (plan.parsers[index] as Parse)(value);
      }
    } catch (error) {
      // As pg does: the query fails with the parser's error once the server is ready again.
      internals._canceledDueToError = error as Error;
      return;
    }
    internals._result.rows.push(row);
  }
}
