import { ApiError } from '../../errors.js';
import type { OperationObject } from '../../openapi/document.js';

/**
 * The spec's word for how large an operation's request body may be: an
 * integer of bytes on its Request Body Object (`requestBody:
 * {x-body-limit-bytes: 1048576, ...}`). Absent, the server's limit holds
 * (src/http/limits.ts). It becomes the route's bodyLimit, so fastify stops
 * reading past it, and both 413s (a body read too far, and a Content-Length
 * refused before 100 Continue) quote it.
 */
export const bodyLimitExtension = 'x-body-limit-bytes';

/** The operation's declared body limit, or undefined for the server's; a malformed one throws at start. */
export function bodyLimitOf(operation: OperationObject): number | undefined {
  const declared = (operation.requestBody as Record<string, unknown> | undefined)?.[bodyLimitExtension];
  if (declared === undefined) return undefined;
  if (typeof declared !== 'number' || !Number.isSafeInteger(declared) || declared < 1)
    throw new Error(
      `openapi.yaml: ${operation.operationId}'s requestBody has ${bodyLimitExtension} ` +
        `${JSON.stringify(declared)}; expected a positive integer of bytes`,
    );
  return declared;
}

/** The 413 of a body larger than the route's limit: the client learns the size it may send. */
export function bodyTooLarge(limitBytes: number): ApiError {
  return new ApiError(413, 'payload_too_large', `The request body is larger than ${limitBytes} bytes.`);
}
