import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { everyResponseHeaders } from '../arrival/securityHeaders.js';
import { excerpt } from './excerpt.js';

function frameworkErrorAnswer(error: FastifyError, request: FastifyRequest): ApiError {
  const path = excerpt(request.url.split('?', 1)[0] ?? '');
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return new ApiError(400, 'invalid_request', `The path ${path} is not valid percent-encoding.`);
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(414, 'invalid_request', `A path parameter in ${path} is longer than 100 characters.`);
    default:
      return new ApiError(500, 'internal_error', 'Internal server error.');
  }
}

/**
 * fastify's frameworkErrors: errors the router raises before any route or
 * hook runs (bad percent-encoding, a path parameter over maxParamLength)
 * answer the Error object with X-Request-Id and the security headers, and
 * get the request's log line like any other request.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const answer = frameworkErrorAnswer(error, request);
  if (answer.status >= 500) request.log.error({ err: error }, 'request failed');
  reply
    .code(answer.status)
    .headers({ ...everyResponseHeaders, 'x-request-id': request.id })
    .type('application/json; charset=utf-8')
    .send(answer.body());
  request.log.info(
    { method: request.method, route: null, path: excerpt(request.url.split('?', 1)[0] ?? ''), status: answer.status },
    'request completed',
  );
}
