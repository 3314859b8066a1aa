import { ConfigError } from '../config.js';
import { DatabaseUnavailableError, DataDirLockedError, ReadOnlyDatabaseError } from '../db/index.js';

/** One line for an error an operator can act on; the stack for anything else. */
export function describeFailure(error: unknown, known: Array<abstract new (...args: never[]) => Error> = []): string {
  if (error instanceof DatabaseUnavailableError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `the database is unavailable (${error.reason})${cause}`;
  }
  const operatorCanAct = [ConfigError, DataDirLockedError, ReadOnlyDatabaseError, ...known].some(
    (type) => error instanceof type,
  );
  if (error instanceof Error) return operatorCanAct ? error.message : (error.stack ?? error.message);
  return String(error);
}
