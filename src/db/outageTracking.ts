import type { Database, Queryable } from './types.js';
import { DatabaseUnavailableError } from './unavailability.js';

export interface OutageListener {
  /** The first failed call after a success (or after start): one per outage. */
  started(reason: string): void;
  /** The first success after failures, with how long the outage lasted and how many calls failed. */
  ended(durationMs: number, failedCalls: number): void;
}

/** Why the database is unavailable, in one line without a stack. */
export function reasonOf(error: Error): string {
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const message = cause.message.split('\n', 1)[0] ?? '';
    return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
  }
  return error.message;
}

/**
 * The same database, reporting outages to listener: the first failure of
 * an outage and its end, instead of one report per failed call.
 */
export function trackAvailability(db: Database, listener: OutageListener): Database {
  let since: number | undefined;
  let failedCalls = 0;
  function succeeded<T>(result: T): T {
    if (since !== undefined) {
      const duration = Date.now() - since;
      const failedDuringOutage = failedCalls;
      since = undefined;
      failedCalls = 0;
      listener.ended(duration, failedDuringOutage);
    }
    return result;
  }
  function failed(error: unknown): never {
    if (error instanceof DatabaseUnavailableError) {
      failedCalls += 1;
      if (since === undefined) {
        since = Date.now();
        listener.started(reasonOf(error));
      }
    }
    throw error;
  }
  // Two shared callbacks per call, no async function frame: this wraps every
  // statement. The Database methods it wraps reject rather than throw.
  const observe = <T>(pending: Promise<T>): Promise<T> => pending.then(succeeded, failed);
  const tracked: Queryable = {
    query: (statement, values) => observe(db.query(statement, values)),
    execScript: (sql) => observe(db.execScript(sql)),
  };
  return Object.assign(Object.create(db) as Database, tracked, {
    transaction: <T>(work: (tx: Queryable) => Promise<T>) => observe(db.transaction(work)),
  });
}
