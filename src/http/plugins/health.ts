import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/index.js';
import { loadMigrations, schemaStatus } from '../../db/migrations.js';
import { ApiError } from '../../errors.js';
import type { DrainState } from './draining.js';
import { sharedProbe } from './sharedProbe.js';

/**
 * Resolves with the schema version when the service can serve the API now
 * (not draining, not shedding load, primary reachable, schema current);
 * rejects with the 503 ApiError saying why not. /readyz and the readiness
 * gauge both ask it. The database part is answered from one probe shared by
 * every caller within readinessMaxAgeMs, so that a flood of probes cannot
 * become a flood of queries.
 */
export function readinessCheck(
  db: Database,
  drain: DrainState,
  isOverloaded: () => boolean,
  readinessMaxAgeMs: number,
): () => Promise<number> {
  const migrations = loadMigrations();
  const probeSchema = sharedProbe(() => schemaStatus(db, migrations), readinessMaxAgeMs);
  return async () => {
    if (drain.draining()) throw new ApiError(503, 'service_unavailable', 'The service is shutting down.');
    if (isOverloaded()) {
      throw new ApiError(503, 'service_unavailable', 'The service is overloaded and sheds API requests.');
    }
    const schema = await probeSchema();
    if (schema.applied < schema.expected) {
      throw new ApiError(
        503,
        'service_unavailable',
        `The database schema is at version ${schema.applied} but this service needs version ${schema.expected}; run npm run migrate.`,
      );
    }
    return schema.applied;
  };
}

/**
 * Probes for orchestrators, outside /v1 and outside the contract: no key, no
 * rate limit. /healthz says the process serves HTTP; /readyz says it can
 * serve the API now (see readinessCheck). A database error becomes the 503
 * Error object through the error handler.
 *
 * Replicas do not decide readiness: reads fall back to the primary, so an
 * unreachable or lagging replica leaves /readyz at 200 (taking every
 * instance out of the balancer would not help) and shows in its body:
 * "reads" says where reads go, "replicas" the state of each. The database
 * part of /readyz may be up to httpLimits.readinessMaxAgeMs old.
 */
export function registerHealthRoutes(app: FastifyInstance, db: Database, checkReadiness: () => Promise<number>): void {
  const probe = { config: { rateLimit: false as const }, logLevel: 'warn' as const };

  app.get('/healthz', probe, async () => ({ status: 'ok' }));

  app.get('/readyz', probe, async () => {
    const schemaVersion = await checkReadiness();
    const { reads, replicas } = db.readStatus();
    // Pool pressure: callers waiting for a connection mean the pool is too small for the load.
    const pool = db.poolStatus();
    return {
      status: 'ready',
      schemaVersion,
      reads,
      ...(replicas.length > 0 ? { replicas } : {}),
      ...(pool ? { pool } : {}),
    };
  });
}
