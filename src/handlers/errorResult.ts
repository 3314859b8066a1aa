import type { ErrorCode } from '../errors.js';

/**
 * A handler's error answer as a result, like its successes: the Error object
 * under the status it is answered with. Returned from a handler typed
 * `Handler<K>`, it compiles only when operation K declares that status and
 * the status's schema allows the code (createPet cannot answer 404; getPet's
 * 404 cannot carry an idempotency code). The HTTP layer answers it through
 * the one error handler, as it does a thrown error.
 */
export function errorResult<Status extends number, Code extends ErrorCode>(
  status: Status,
  code: Code,
  message: string,
): { status: Status; body: { code: Code; message: string; status: Status } } {
  return { status, body: { code, message, status } };
}
