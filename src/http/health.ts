import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/index.js';
import { loadMigrations, schemaStatus } from '../db/migrations.js';
import { ApiError } from '../errors.js';

/**
 * Probes for orchestrators, outside /v1 and outside the contract: no key, no
 * rate limit. /healthz says the process serves HTTP; /readyz says it can
 * serve the API now (database reachable, schema current, not shutting down).
 * A database error becomes the 503 Error object through the error handler.
 */
export function registerHealthRoutes(app: FastifyInstance, db: Database, isDraining: () => boolean): void {
  const migrations = loadMigrations();
  const probe = { config: { rateLimit: false as const }, logLevel: 'warn' as const };

  app.get('/healthz', probe, async () => ({ status: 'ok' }));

  app.get('/readyz', probe, async () => {
    if (isDraining()) throw new ApiError(503, 'service_unavailable', 'The service is shutting down.');
    const schema = await schemaStatus(db, migrations);
    if (schema.applied < schema.expected) {
      throw new ApiError(
        503,
        'service_unavailable',
        `The database schema is at version ${schema.applied} but this service needs version ${schema.expected}; run npm run migrate.`,
      );
    }
    return { status: 'ready', schemaVersion: schema.applied };
  });
}
