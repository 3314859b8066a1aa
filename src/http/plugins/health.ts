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
 * A replica's state as anyone may see it: its kind ("streaming",
 * "unreachable", "lagging", "not in recovery", "not checked yet"), without the
 * driver's words or any figure.
 */
function publicReplicaState(state: string): string {
  return (/^[a-z ]+/.exec(state)?.[0] ?? 'unknown').trim();
}

/**
 * Probes for orchestrators, outside /v1 and outside the contract: no key, no
 * rate limit. /healthz says the process serves HTTP; /readyz says it can
 * serve the API now (see readinessCheck). A database error becomes the 503
 * Error object through the error handler.
 *
 * Anyone who reaches the port may ask, so the answer says only whether the
 * service is ready, where reads go and the kind of each replica's state:
 * never a host, a database name, the driver's text or the pool's figures.
 * Those are for operators: a replica's host and the driver's words are in
 * its log line when its state changes, the pool in the metrics
 * (pets_db_pool_*), on the private metrics listener.
 *
 * Replicas do not decide readiness: reads fall back to the primary, so an
 * unreachable or lagging replica leaves /readyz at 200 (taking every
 * instance out of the balancer would not help). The database part of
 * /readyz may be up to httpLimits.readinessMaxAgeMs old.
 */
export function registerHealthRoutes(app: FastifyInstance, db: Database, checkReadiness: () => Promise<number>): void {
  const probe = { config: { rateLimit: false as const }, logLevel: 'warn' as const };

  app.get('/healthz', probe, async () => ({ status: 'ok' }));

  app.get('/readyz', probe, async () => {
    await checkReadiness();
    const { reads, replicas } = db.readStatus();
    return {
      status: 'ready',
      reads,
      ...(replicas.length > 0 ? { replicas: replicas.map((replica) => publicReplicaState(replica.state)) } : {}),
    };
  });
}
