import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError, UnstorableValueError, unavailabilityOf } from '../../db/index.js';
import { ApiError, type ErrorCode } from '../../errors.js';
import { bodyTooLarge } from '../operations/bodyLimit.js';
import { boundedMessage } from './excerpt.js';
import { validationMessage } from './validationMessage.js';

const codeForStatus: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/**
 * Retry-After on a 503 the database caused. Such outages last seconds (a
 * failover of the primary about 10 s, a restart less), and a client waits
 * at least this long: a longer hint only adds to its own gap after the
 * database is back. Overload has its own hint (loadShedding).
 */
const databaseRetryAfterSeconds = 1;

/** The media types the route's request body may be sent as, from its schema (JSON where it declares none). */
function requestMediaTypesOf(request: FastifyRequest): string {
  const body = request.routeOptions.schema?.body as { content?: object } | undefined;
  const declared = Object.keys(body?.content ?? {});
  return declared.length > 0 ? declared.join(' or ') : 'application/json';
}

function fromFastifyError(error: FastifyError, request: FastifyRequest, bodyLimit: number): ApiError | undefined {
  switch (error.code) {
    case 'FST_ERR_VALIDATION':
      return new ApiError(
        400,
        'invalid_request',
        validationMessage(error.validation as never, error.validationContext),
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        415,
        'unsupported_media_type',
        `The request body must be sent as Content-Type: ${requestMediaTypesOf(request)}.`,
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge(bodyLimit);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'invalid_request', 'The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'invalid_request', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'invalid_request', 'The Content-Length header does not match the body.');
    default:
      break;
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return new ApiError(400, 'invalid_request', 'The request body is not valid JSON.');
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // The framework's own client errors carry messages written for clients.
    return new ApiError(status, codeForStatus[status] ?? 'invalid_request', error.message);
  }
  return undefined;
}

/**
 * The one place an error becomes a response: always the Error object, with
 * status equal to the HTTP status. 5xx bodies say nothing internal; the log does.
 *
 * Register it twice, on the app and again on the scope of the API routes
 * (buildApp does): an error body that fails response validation is an
 * error raised while answering an error, and fastify hands that one to the
 * next handler up. Without a second layer of ours that is fastify's default,
 * which answers FST_ERR_FAILED_ERROR_SERIALIZATION and logs nothing; with it,
 * the answer is a logged 500 Error object.
 */
export function errorHandler(
  bodyLimit: number,
  countServerError: (status: number, code: ErrorCode) => void = () => undefined,
) {
  return function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    // The route's limit (an operation's x-body-limit-bytes), else the server's.
    const limit = request.routeOptions.bodyLimit || bodyLimit;
    let apiError = error instanceof ApiError ? error : fromFastifyError(error, request, limit);
    if (error instanceof DatabaseUnavailableError) {
      // One line per request at warn, without a stack (the outage itself is
      // logged once when it starts and once when it ends): reason says what
      // to look at (the pooler, the pool size, the server), detail what the
      // driver or the pooler said.
      request.log.warn({ reason: error.reason, detail: unavailabilityOf(error) }, 'database unavailable');
      apiError = new ApiError(503, 'service_unavailable', 'The service is temporarily unavailable; retry later.', {
        'retry-after': String(databaseRetryAfterSeconds),
      });
    }
    if (error instanceof UnstorableValueError) {
      // The schema let the value through and the storage refused it: the
      // client's value (a 400), and a gap between openapi.yaml and the
      // columns an operator may want to close (warn, with PostgreSQL's words).
      request.log.warn({ sqlState: error.sqlState, detail: error.message }, 'value refused by the database');
      apiError = new ApiError(400, 'invalid_request', `The request holds ${error.kind}.`);
    }
    if (!apiError) {
      request.log.error({ err: error }, 'request failed');
      apiError = new ApiError(500, 'internal_error', 'Internal server error.');
    } else if (error instanceof ApiError && apiError.status === 503) {
      // A deliberate refusal (starting, draining, overload): no stack to show.
      request.log.warn({ code: apiError.code, reason: apiError.message }, 'service unavailable');
    } else if (apiError.status >= 500 && !(error instanceof DatabaseUnavailableError)) {
      request.log.error({ err: error }, 'request failed');
    }
    // A probe's 503 is its answer ("not ready"), counted by pets_ready, not an API error.
    if (apiError.status >= 500 && request.routeOptions.config.probe !== true)
      countServerError(apiError.status, apiError.code);
    reply.code(apiError.status).headers(apiError.headers).type('application/json; charset=utf-8');
    return { ...apiError.body(), message: boundedMessage(apiError.message) };
  };
}
