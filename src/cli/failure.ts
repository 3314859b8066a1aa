import { ConfigError } from '../config/load.js';
import {
  DatabaseUnavailableError,
  DataDirAccessError,
  DataDirLockedError,
  ReadOnlyDatabaseError,
} from '../db/index.js';

/** An error PostgreSQL itself reported: its message is for the operator, and a stack adds nothing. */
interface ServerError extends Error {
  code: string;
  severity: string;
}

function isServerError(error: unknown): error is ServerError {
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return (
    error instanceof Error && typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
  );
}

/** What PostgreSQL said, with what to do where the cause is one an operator meets on a first setup. */
function describeServerError(error: ServerError): string {
  const missingDatabase = error.code === '3D000' ? /database "([^"]+)" does not exist/.exec(error.message) : null;
  if (missingDatabase) {
    const name = missingDatabase[1] ?? '';
    return `${error.message}: create it first (createdb ${name}, or CREATE DATABASE ${name} in psql), then run this again`;
  }
  return `${error.message} (PostgreSQL error ${error.code})`;
}

/**
 * One line for an error an operator can act on (a setting, the database's
 * state, anything PostgreSQL itself refused); the stack for anything else,
 * which is a bug.
 */
export function describeFailure(error: unknown, known: Array<abstract new (...args: never[]) => Error> = []): string {
  if (error instanceof DatabaseUnavailableError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `the database is unavailable (${error.reason})${cause}`;
  }
  if (isServerError(error)) return describeServerError(error);
  const operatorCanAct = [ConfigError, DataDirAccessError, DataDirLockedError, ReadOnlyDatabaseError, ...known].some(
    (type) => error instanceof type,
  );
  if (error instanceof Error) return operatorCanAct ? error.message : (error.stack ?? error.message);
  return String(error);
}
