// Compile-time checks, run by `npm run typecheck`: the Error object's codes are those of every schema of
// its shape in the spec, derived, never listed by hand. Each @ts-expect-error fails the check if the line
// below it compiles.
import type { ErrorBody, ErrorCode, ErrorShaped } from '../../src/errors.js';

// Today's spec: Error's codes and each operation's own.
export const codes: ErrorCode[] = ['invalid_request', 'idempotency_key_reused', 'insufficient_scope', 'gone'];
// @ts-expect-error no schema declares this code
export const unknownCode: ErrorCode = 'teapot';
export const body: ErrorBody = { code: 'gone', message: 'Gone.', status: 410 };

// A spec with one schema more of the shape: its code joins the union; a schema of another shape does not.
interface FixtureSchemas {
  Pet: { id: number; name: string };
  Error: { code: 'not_found'; message: string; status: number };
  PreconditionError: { code: 'precondition_failed'; message: string; status: 412 };
}
type FixtureCode = ErrorShaped<FixtureSchemas>['code'];
export const precondition: FixtureCode = 'precondition_failed';
// @ts-expect-error Pet is not of the Error object's shape
export const pet: ErrorShaped<FixtureSchemas> = { id: 1, name: 'Rex' };
