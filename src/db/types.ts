/**
 * A parameterized statement. A name lets PostgreSQL prepare it once per
 * connection and, after a few runs, reuse one generic plan for every
 * parameter value. A statement whose best plan depends on the values has no
 * name, so that each run is planned for its own values.
 */
export interface Statement {
  name?: string;
  text: string;
}

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

/** Anything that runs SQL: the database itself or a transaction. */
export interface Queryable {
  query<Row>(statement: Statement, values?: readonly unknown[]): Promise<QueryResult<Row>>;
  /** Runs a script of several statements without parameters (migrations only). */
  execScript(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'postgres' | 'embedded';
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The database could not be reached or refused work; the caller may retry later. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
  constructor(cause: unknown) {
    super('database unavailable', { cause });
  }
}
