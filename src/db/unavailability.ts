import { unstorableValue } from './dataException.js';

/** The database could not be reached or refused work; the caller may retry later. */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
  constructor(
    cause: unknown,
    /** For the log: what went wrong, in an operator's words. */
    readonly reason = 'the database could not be reached',
  ) {
    super('database unavailable', { cause });
  }
}

// Node's socket errors: the server (or a pooler in front of it) cannot be reached.
const networkCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * SQLSTATEs that say the server cannot do the work now, whatever the
 * statement: the statement itself is fine and may succeed when retried.
 */
const reasonBySqlState: Record<string, string> = {
  // PgBouncer reports its own refusals with 08P01: query_wait_timeout,
  // "no more connections allowed (max_client_conn)", "server conn crashed?",
  // "pgbouncer cannot connect to server", query_timeout.
  '08P01': 'the pooler refused the work',
  '08000': 'the connection failed',
  '08001': 'the server refused the connection',
  '08003': 'the connection does not exist',
  '08004': 'the server rejected the connection',
  '08006': 'the connection failed',
  '53300': 'the server has too many connections',
  '53100': 'the disk is full',
  '57P01': 'the server is shutting down',
  '57P02': 'the server crashed',
  '57P03': 'the server is starting up or shutting down',
  // Named prepared statements behind a transaction pooler: each statement
  // lands on whichever server connection is free, where the name is unknown
  // or taken by another client.
  '26000': 'a prepared statement is missing on the server connection (a transaction pooler needs unnamed statements)',
  '42P05':
    'a prepared statement already exists on the server connection (a transaction pooler needs unnamed statements)',
  // A write reaching a server that is (or became, after a failover) a replica.
  '25006': 'the database is read-only',
  '57014': 'the statement was canceled (statement_timeout or an operator)',
};

const reasonByMessage: Array<[RegExp, string]> = [
  [/timeout exceeded when trying to connect/i, 'no connection within the acquire timeout'],
  [/Query read timeout/i, 'no answer within the query timeout'],
  [/Connection terminated|Client has encountered a connection error/i, 'the connection was lost'],
  // A hot standby cancels a read whose rows replay is about to remove (40001).
  [/conflict with recovery/i, 'the replica canceled the read (conflict with recovery)'],
];

/**
 * Why an error means the database cannot do the work now (and a retry later
 * may succeed), or undefined when the error belongs to the statement itself.
 */
export function unavailabilityReason(error: unknown): string | undefined {
  if (error instanceof DatabaseUnavailableError) return error.reason;
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (networkCodes.has(code)) return 'the database could not be reached';
    const reason = reasonBySqlState[code];
    if (reason) return reason;
  }
  return reasonByMessage.find(([pattern]) => pattern.test(error.message))?.[1];
}

/**
 * SQLSTATEs of an outage that a failover or a switchover causes and ends
 * within seconds: the connection failed or was refused, the server is
 * shutting down, crashed or starting, or it is not (yet) the writable
 * primary. Not "too many connections" (53300): that is load, which retries
 * would add to.
 */
const passingSqlStates = new Set(['08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03', '25006']);

/**
 * PgBouncer says 08P01 for all its refusals; those that pass with a
 * switchover are about its server (down, or its connection lost). Its
 * limits (max_client_conn, query_wait_timeout, query_timeout) are load or
 * a wait that already took its bound.
 */
const poolerLostItsServer = /cannot connect to server|server conn crashed|server login has been failing/i;

/**
 * Whether error is an outage that passes within seconds (see
 * passingSqlStates), as opposed to one that lasts (a full disk, a pooler
 * that needs unnamed statements) or a wait that already took its bound (the
 * query or acquire timeout): the first is worth a retry soon, the others not.
 */
export function passesSoon(error: unknown): boolean {
  const failure = error instanceof DatabaseUnavailableError ? error.cause : error;
  if (!(failure instanceof Error)) return false;
  const code = (failure as { code?: unknown }).code;
  if (code === '08P01') return poolerLostItsServer.test(failure.message);
  if (typeof code === 'string') return networkCodes.has(code) || passingSqlStates.has(code);
  return /Connection terminated|Client has encountered a connection error/i.test(failure.message);
}

/**
 * Rethrows error as a DatabaseUnavailableError when it is one, as an
 * UnstorableValueError when PostgreSQL refused a value (class 22, a CHECK), else as it is.
 */
export function translate(error: unknown): never {
  const reason = unavailabilityReason(error);
  if (reason === undefined) throw unstorableValue(error) ?? error;
  throw error instanceof DatabaseUnavailableError ? error : new DatabaseUnavailableError(error, reason);
}
