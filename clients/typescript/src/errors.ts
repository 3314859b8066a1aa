import type { operations } from './generated/api.js';
import { declaredErrorStatuses } from './generated/contract.js';

/** The operations of the contract, by operationId. */
export type OperationId = keyof operations;

type Responses<Op extends OperationId> = operations[Op]['responses'];

/** The error statuses (4xx and 5xx) the contract declares for an operation. */
export type ErrorStatus<Op extends OperationId> = (typeof declaredErrorStatuses)[Op][number] & keyof Responses<Op>;

/** The Error object codes the contract declares for an operation's status. */
export type ErrorCode<Op extends OperationId, Status extends ErrorStatus<Op>> = Responses<Op>[Status] extends {
  content: { 'application/json': { code: infer Code } };
}
  ? Code
  : never;

/**
 * A PetStoreError whose status and code the contract declares for the operation: a union over the
 * statuses, so that checking `status` narrows `code` (409 is idempotency_key_in_use or _reused).
 */
export type DeclaredError<Op extends OperationId> = {
  [Status in ErrorStatus<Op>]: PetStoreError<Op> & { readonly status: Status; readonly code: ErrorCode<Op, Status> };
}[ErrorStatus<Op>];

/** The code of an answer the contract does not declare (a gateway's 502 page, a body not an Error object). */
export const unexpectedResponse = 'unexpected_response';

/** The code of a 304 to a call that sent `ifNoneMatch`: what the caller holds is current. */
export const notModified = 'not_modified';

/**
 * The service answered a call with an error: `status` is the HTTP status, `code` the Error object's stable
 * code (`unexpected_response` for an answer the contract does not declare), `requestId` the answer's
 * X-Request-Id (quote it to the service's operators). After getPet's sunset (410 `gone`), `successor` is
 * the absolute URL of the call that replaces it.
 */
export class PetStoreError<Op extends OperationId = OperationId> extends Error {
  override readonly name = 'PetStoreError';
  readonly operation: Op;
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly successor: string | undefined;

  constructor(
    operation: Op,
    answer: { status: number; code: string; message: string; requestId?: string | undefined },
    successor?: string,
  ) {
    super(successor === undefined ? answer.message : `${answer.message} (successor: ${successor})`);
    this.operation = operation;
    this.status = answer.status;
    this.code = answer.code;
    this.requestId = answer.requestId;
    this.successor = successor;
  }

  /**
   * Whether `error` is the operation's answer with a status and code its contract declares; narrows
   * `status` to those statuses and `code` to each one's codes.
   */
  static is<Op extends OperationId>(error: unknown, operation: Op): error is DeclaredError<Op> {
    if (!(error instanceof PetStoreError) || error.operation !== operation || error.code === unexpectedResponse)
      return false;
    return (declaredErrorStatuses[operation] as readonly number[]).includes(error.status);
  }
}

/** The Error object in an answer's body, if the body is one. */
export function errorObjectOf(text: string): { code: string; message: string; status: number } | undefined {
  try {
    const body = JSON.parse(text) as Record<string, unknown> | null;
    if (typeof body?.['code'] === 'string' && typeof body['message'] === 'string' && typeof body['status'] === 'number')
      return { code: body['code'], message: body['message'], status: body['status'] };
  } catch {
    // not JSON: an answer from something other than the service
  }
  return undefined;
}
