import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { listOperations, type OpenApiDocument } from '../../openapi/document.js';

// What a browser script may send and read; without the exposed ones a
// script could not see pagination, request ids, limits, deprecation, entity
// tags or replays.
const allowedHeaders = ['Authorization', 'Content-Type', 'X-Request-Id', 'Idempotency-Key', 'If-None-Match'];
const exposedHeaders = [
  'Link',
  'Location',
  'X-Request-Id',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'Deprecation',
  'Sunset',
  'ETag',
  'Idempotent-Replayed',
];

export function parseOrigins(list: string): string[] {
  return list
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');
}

/**
 * CORS for the listed origins only. Any other request (no Origin, another
 * origin, an OPTIONS that is not a preflight) is left alone, so an OPTIONS
 * the plugin does not answer reaches the not-found handler and gets the
 * usual 404/405 Error object instead of the plugin's plain-text 400.
 * Registered before the auth hook: a preflight carries no key.
 */
export async function registerCors(app: FastifyInstance, spec: OpenApiDocument, origins: string[]): Promise<void> {
  if (origins.length === 0) return;
  const methods = [...new Set(listOperations(spec).map((entry) => entry.method))];
  const allowed = new Set(origins);
  await app.register(cors, {
    delegator: (request: FastifyRequest, callback: (error: Error | null, options: FastifyCorsOptions) => void) => {
      const origin = request.headers.origin;
      const isPreflight = request.method === 'OPTIONS';
      if (
        origin === undefined ||
        !allowed.has(origin) ||
        (isPreflight && !request.headers['access-control-request-method'])
      ) {
        callback(null, { origin: false });
        return;
      }
      callback(null, { origin, methods, allowedHeaders, exposedHeaders, maxAge: 600 });
    },
  });
}
