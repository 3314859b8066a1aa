import type { FastifyInstance } from 'fastify';
import type { ServiceMetrics } from '../../observability/metrics.js';
import type { OpenApiDocument } from '../../openapi/document.js';
import { notFoundHandler } from '../operations/notFound.js';
import { errorHandler } from './errorHandler.js';

export type ErrorAnswer = ReturnType<typeof errorHandler>;

/**
 * Every error, fastify's included, answered as the Error object; an unknown
 * path or method as 404 or 405 from the spec. Returns the error handler, which
 * the operations' scope sets again (see errorHandler).
 */
export function answerErrors(
  app: FastifyInstance,
  spec: OpenApiDocument,
  bodyLimitBytes: number,
  countServerError: ServiceMetrics['serverError'],
): ErrorAnswer {
  const handleError = errorHandler(bodyLimitBytes, countServerError);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(notFoundHandler(spec));
  return handleError;
}
