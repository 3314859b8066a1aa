import pg from 'pg';
import { int8ToNumber } from './int8.js';
import { StatementQuery } from './statementQuery.js';
import type { PostgresOptions, Queryable, QueryResult, Statement } from './types.js';
import { translate, unavailabilityReason } from './unavailability.js';

export type PoolSettings = Pick<
  PostgresOptions,
  'poolSize' | 'statements' | 'acquireTimeoutMs' | 'queryTimeoutMs' | 'idleTimeoutMs' | 'onPoolError'
>;

/**
 * A request waits at most this long for a pooled connection, queueing and
 * connecting included, then gets 503. A healthy pool hands one out in
 * milliseconds; a 5 s wait means the database or the pool is saturated, and
 * a quick 503 lets the client retry elsewhere before its own timeout.
 */
const defaultAcquireTimeoutMs = 5000;

/**
 * An idle pooled connection is closed after this long, so that instances
 * sharing max_connections do not keep slots they are not using, while a
 * steady load (a request every few seconds) keeps its connections.
 */
const defaultIdleTimeoutMs = 10_000;

type Parse = (text: string) => unknown;
const int8: number = pg.types.builtins.INT8;
const builtin = pg.types.getTypeParser as (oid: number, format: 'text' | 'binary') => Parse;

/**
 * pg's type parsers, except int8's: int8ToNumber, which makes the text a
 * number and refuses one it would round. pg's own returns the text, after
 * testing it against a regular expression, and every row would then be
 * copied to convert it (two per pet: a page of 100 pets, 200 values).
 */
const typeParsers = {
  getTypeParser: (oid: number, format: 'text' | 'binary' = 'text'): Parse =>
    oid === int8 && format === 'text' ? int8ToNumber : builtin(oid, format),
};

/** The parser of a text column of this type (StatementQuery's rows). */
function textParser(oid: number): Parse {
  return typeParsers.getTypeParser(oid, 'text');
}

/** A pg pool whose waits are bounded: for a connection, and (when set) for each answer. */
export function createPool(url: string, settings: PoolSettings): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    types: typeParsers,
    max: settings.poolSize,
    // pg-pool applies it to both the wait in its own queue and connecting.
    connectionTimeoutMillis: settings.acquireTimeoutMs ?? defaultAcquireTimeoutMs,
    idleTimeoutMillis: settings.idleTimeoutMs ?? defaultIdleTimeoutMs,
    // The bound on each answer (queryTimeoutMs) is send's, not pg's query_timeout.
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', (error) => settings.onPoolError?.(error));
  return pool;
}

/** How statements are sent: with their names or unnamed, and how long an answer may take (0 or unset: no bound). */
export interface StatementSettings {
  named: boolean;
  queryTimeoutMs: number | undefined;
}

export function statementSettingsOf(settings: PoolSettings): StatementSettings {
  return { named: settings.statements !== 'unnamed', queryTimeoutMs: settings.queryTimeoutMs };
}

/** pg reads a Query's name when it sends it; its typings do not declare the field. */
type NamedQuery = pg.Query & { name?: string | undefined };

// The message pg's own query_timeout uses; unavailable.ts maps it to its reason.
const queryTimeoutMessage = 'Query read timeout';

/** pg's callback: the result, or the error without one. */
type Answered = (error: Error | undefined, result?: pg.QueryResult) => void;

function settle(resolve: (result: pg.QueryResult) => void, reject: (error: Error) => void): Answered {
  return (error, result) => {
    if (result === undefined) reject(error ?? new Error('the statement ended without an answer'));
    else resolve(result);
  };
}

/**
 * Sends a statement and calls back with its answer, or with a timeout error
 * after timeoutMs; onTimeout then drops the connection, whose late answer is
 * ignored. A pooler accepts the login at once and then queues the statement
 * until it has a server connection: only a bound on the answer ends that wait.
 *
 * pg's callback form, with a timer of our own: pg's promise form and its
 * query_timeout option both leave a closure of Client.query's on the Query
 * while its rows arrive, and under load that kept every in-flight result
 * alive through young-generation collections (a page of 100 pets:
 * scavenges of 3.4 instead of 0.5 ms, a full collection a second, 15 % less
 * throughput; docs/performance.md).
 */
function dispatch(
  client: pg.PoolClient,
  statement: Statement,
  values: readonly unknown[],
  settings: StatementSettings,
  onTimeout: () => void,
  answered: Answered,
): void {
  let settled = false;
  const timer = settings.queryTimeoutMs
    ? setTimeout(() => {
        settled = true;
        // First: the connection is dealt with before the caller hears of the timeout.
        onTimeout();
        answered(new Error(queryTimeoutMessage));
      }, settings.queryTimeoutMs)
    : undefined;
  const onAnswer = (error: Error | undefined, result: pg.QueryResult) => {
    if (settled) return;
    clearTimeout(timer);
    answered(error, result);
  };
  // A Query built from the text and named afterwards: given a config
  // object, pg copies it property by property on every call. A script (no
  // name, no values: the simple protocol, several statements) is pg's own.
  const query = (
    statement.name === undefined && values.length === 0
      ? new pg.Query(statement.text, values as unknown[], onAnswer)
      : new StatementQuery(statement, values as unknown[], onAnswer, textParser)
  ) as NamedQuery;
  if (settings.named) query.name = statement.name;
  client.query(query);
}

/** dispatch, as a promise: for a transaction's client. */
function send(
  client: pg.PoolClient,
  statement: Statement,
  values: readonly unknown[],
  settings: StatementSettings,
): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    // In a transaction, runTransaction drops the connection after a timeout.
    dispatch(client, statement, values, settings, ignoreLateAnswer, settle(resolve, reject));
  });
}

function ignoreLateAnswer(): void {
  // The statement has failed with the timeout; its connection is dealt with by its owner.
}

/**
 * A checked-out client whose connection drops fails its statement and also
 * emits 'error', which without a listener would end the process; the pool
 * listens only while the client is idle. (pg-pool's own query() does the same.)
 */
export function ignoreDroppedConnection(): void {
  // The failed statement reports it.
}

/**
 * One statement on a connection of the pool, which is dropped if the answer
 * is late. Callbacks throughout: one promise per statement.
 */
function sendOnPool(
  pool: pg.Pool,
  statement: Statement,
  values: readonly unknown[],
  settings: StatementSettings,
): Promise<pg.QueryResult> {
  return new Promise((resolve, reject) => {
    pool.connect((connectError: Error | undefined, client: pg.PoolClient | undefined, done) => {
      if (connectError || !client) {
        reject(connectError ?? new Error('the pool gave no connection'));
        return;
      }
      client.on('error', ignoreDroppedConnection);
      // Once: at the timeout a late connection is released with an error, which drops it.
      let release = (error?: Error) => {
        release = () => undefined;
        client.removeListener('error', ignoreDroppedConnection);
        done(error);
      };
      const onTimeout = () => {
        release(new Error(queryTimeoutMessage));
      };
      const answered = settle(resolve, reject);
      dispatch(client, statement, values, settings, onTimeout, (error, result) => {
        // A connection that failed, or that reaches a server which shut down,
        // crashed or turned read-only (a demoted primary), is not handed to
        // the next request: releasing it with the error drops it, and the pool
        // opens a new one, through the route to the current primary.
        release(error && unavailabilityReason(error) !== undefined ? error : undefined);
        answered(error, result);
      });
    });
  });
}

function toQueryResult<Row>(result: pg.QueryResult): QueryResult<Row> {
  return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
}

function ignoreResult(): void {
  // A script's statements return nothing the caller reads.
}

/** Runs statements on a pool or on a client checked out for a transaction. */
export function queryableOf(source: pg.Pool | pg.PoolClient, settings: StatementSettings): Queryable {
  const run =
    source instanceof pg.Pool
      ? (statement: Statement, values: readonly unknown[]) => sendOnPool(source, statement, values, settings)
      : (statement: Statement, values: readonly unknown[]) => send(source, statement, values, settings);
  return {
    query: <Row>(statement: Statement, values: readonly unknown[] = []) =>
      run(statement, values).then(toQueryResult<Row>, translate),
    // No values: the simple protocol, which runs several statements.
    execScript: (sql: string) => run({ text: sql }, []).then(ignoreResult, translate),
  };
}

/** host:port/database of a connection string, for logs and /readyz (never its credentials). */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'an unparsable URL';
  }
}
