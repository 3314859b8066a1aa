import type { components } from './generated/api.js';

/** The Error object; a few operations declare codes of their own in a schema of the same shape. */
export type ErrorBody =
  | components['schemas']['Error']
  | components['schemas']['IdempotencyError']
  | components['schemas']['SunsetError']
  | components['schemas']['ScopeError'];
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
