import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';

/**
 * Node answers an HTTP/1.1 request without Host with a bare 400 of its own
 * (no body, no request id, no log line) unless requireHostHeader is off; it
 * is off, and this step on arrival gives that request the Error object
 * instead (RFC 9112 3.2: such a request is a 400).
 */
export function requireHostHeader(request: FastifyRequest): void {
  const needsHost = request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1;
  if (needsHost && !request.headers.host)
    throw new ApiError(400, 'invalid_request', 'An HTTP/1.1 request must carry a Host header.');
}
