import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { routeOf } from '../pipeline.js';

/**
 * While the server listens but its database is not ready yet (start-up
 * retries), every route but /healthz answers a 503 Error object: the
 * process is alive, and not ready.
 */
export function startupGate(isReady: () => boolean) {
  return function refuseUntilReady(request: FastifyRequest): void {
    if (isReady() || routeOf(request).url === '/healthz') return;
    throw new ApiError(503, 'service_unavailable', 'The service is starting: waiting for the database.', {
      'retry-after': '1',
    });
  };
}
