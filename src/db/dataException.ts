/**
 * A value the statement was given that PostgreSQL cannot hold: SQLSTATE
 * class 22, data exception (a date out of range such as year 0000, an
 * integer past its column's type, a string longer than its column or
 * holding U+0000, text that is no valid input of its type), or a CHECK
 * constraint of its column (23514). The request
 * named a value the schema allowed and the storage cannot take: the
 * caller's value, not an outage and not a fault of the service.
 */
export class UnstorableValueError extends Error {
  override name = 'UnstorableValueError';
  constructor(
    cause: Error,
    /** The SQLSTATE, for the log. */
    readonly sqlState: string,
    /** What kind of value it was, in a client's words (never PostgreSQL's text, which quotes the value). */
    readonly kind: string,
  ) {
    // PostgreSQL's words stay in the message, for the log and for a migration that meets such a value.
    super(`PostgreSQL refused a value: ${cause.message} (${sqlState})`, { cause });
  }
}

const kindBySqlState: Record<string, string> = {
  '22001': 'a text longer than the service can store',
  '22003': 'a number outside the range the service can store',
  '22007': 'a date or time the service cannot read',
  '22008': 'a date or time outside the range the service can store (years 0001 to 9999)',
  '22009': 'a time zone offset outside the range the service can store (+-15:59)',
  '22P02': 'a value in a form the service cannot read',
  '22021': 'a character the service cannot store (U+0000)',
  '22P05': 'a character the service cannot store (U+0000)',
  '23514': 'a value outside what the service can store',
};

/** The error as an UnstorableValueError when PostgreSQL refused a value (class 22, or a CHECK), else undefined. */
export function unstorableValue(error: unknown): UnstorableValueError | undefined {
  if (error instanceof UnstorableValueError) return error;
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !(code.startsWith('22') || code === '23514')) return undefined;
  return new UnstorableValueError(error, code, kindBySqlState[code] ?? 'a value the service cannot store');
}
