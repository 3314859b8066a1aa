import type { components } from './generated/api.js';

/**
 * Every schema of the Error object's shape among `Schemas`: `Error`, and those of operations that declare
 * codes of their own (IdempotencyError...), as one union.
 */
export type ErrorShaped<Schemas> = {
  [Name in keyof Schemas]: Schemas[Name] extends { code: string; message: string; status: number }
    ? Schemas[Name]
    : never;
}[keyof Schemas];

/** The Error object as openapi.yaml declares it: a new code is an enum value or a schema of this shape there. */
export type ErrorBody = ErrorShaped<components['schemas']>;
export type ErrorCode = ErrorBody['code'];

/** An error meant for the client: it becomes the Error object as it stands. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  body(): { code: ErrorCode; message: string; status: number } {
    return { code: this.code, message: this.message, status: this.status };
  }
}

export const invalidRequest = (message: string) => new ApiError(400, 'invalid_request', message);
