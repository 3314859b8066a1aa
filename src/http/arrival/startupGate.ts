import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { routeOf } from '../pipeline.js';

/** Whether the database is ready: at once without a start-up, else once databaseReady resolves. */
export function readinessOf(databaseReady: Promise<void> | undefined): () => boolean {
  let ready = databaseReady === undefined;
  void databaseReady?.then(() => {
    ready = true;
  });
  return () => ready;
}

/**
 * While the server listens but its database is not ready yet (start-up
 * retries), every route but /healthz answers a 503 Error object: the
 * process is alive, and not ready.
 */
export function startupGate(isReady: () => boolean) {
  return function refuseUntilReady(request: FastifyRequest): void {
    if (isReady() || routeOf(request).url === '/healthz') return;
    throw starting();
  };
}

/** startupGate for an operation's route (never /healthz): readiness alone decides. */
export function operationStartupGate(isReady: () => boolean) {
  return function refuseOperationUntilReady(): void {
    if (!isReady()) throw starting();
  };
}

function starting(): ApiError {
  return new ApiError(503, 'service_unavailable', 'The service is starting: waiting for the database.', {
    'retry-after': '1',
  });
}
