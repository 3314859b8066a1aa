import type { components } from './generated/api.js';

export type ErrorBody = components['schemas']['Error'];
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

  body(): ErrorBody {
    return { code: this.code, message: this.message, status: this.status };
  }
}

export const notFound = (message: string) => new ApiError(404, 'not_found', message);
export const invalidRequest = (message: string) => new ApiError(400, 'invalid_request', message);
