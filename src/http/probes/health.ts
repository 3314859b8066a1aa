import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/index.js';
import { loadMigrations, schemaStatus } from '../../db/migrations.js';
import { readOnlyReason } from '../../db/replication.js';
import { unavailabilityReason } from '../../db/unavailability.js';
import { ApiError } from '../../errors.js';
import type { DrainState } from '../arrival/draining.js';
import { sharedProbe } from './sharedProbe.js';

/** What the service can do now, as /readyz reports it. */
export interface Readiness {
  schemaVersion: number;
  /** Why writes fail now (the primary is unreachable or read-only); undefined while they succeed. */
  writesUnavailable: string | undefined;
}

/** The primary's part of readiness: its schema version, and whether it takes writes. */
interface PrimaryState {
  schema: { applied: number; expected: number };
  readOnly: string | undefined;
}

/**
 * Resolves with what the service can serve now (not draining, not shedding
 * load, schema current; writes may be unavailable, see below); rejects with
 * the 503 ApiError saying why it can serve nothing. /readyz and the
 * readiness gauge both ask it. The database part is answered from one probe
 * shared by every caller within readinessMaxAgeMs, so that a flood of probes
 * cannot become a flood of queries.
 *
 * A primary that is unreachable (a failover under way) or read-only (a
 * demoted primary, a fenced one) fails every instance alike: taking them all
 * out of the balancer would stop the reads that a streaming replica still
 * serves. So with replicas configured (during a failover each of them may
 * be restarting or promoted for a moment: reads go to whichever answers), or
 * while the primary still answers reads, the instance stays ready and says
 * that writes are unavailable; an instance with neither is not ready.
 */
export function readinessCheck(
  db: Database,
  drain: DrainState,
  isOverloaded: () => boolean,
  readinessMaxAgeMs: number,
): () => Promise<Readiness> {
  const migrations = loadMigrations();
  const probePrimary = sharedProbe(async (): Promise<PrimaryState> => {
    const schema = await schemaStatus(db, migrations);
    return { schema, readOnly: db.kind === 'postgres' ? await readOnlyReason(db) : undefined };
  }, readinessMaxAgeMs);
  // The schema never goes back: the last version seen serves while the primary is away.
  let lastSchema: PrimaryState['schema'] | undefined;
  return async () => {
    if (drain.draining()) throw new ApiError(503, 'service_unavailable', 'The service is shutting down.');
    if (isOverloaded()) {
      throw new ApiError(503, 'service_unavailable', 'The service is overloaded and sheds API requests.');
    }
    let state: PrimaryState;
    try {
      state = await probePrimary();
      lastSchema = state.schema;
    } catch (error) {
      const reason = unavailabilityReason(error);
      if (reason === undefined || lastSchema === undefined || db.readStatus().replicas.length === 0) throw error;
      return checkedSchema(lastSchema, `the primary is unavailable: ${reason}`);
    }
    return checkedSchema(
      state.schema,
      state.readOnly === undefined ? undefined : `the primary is read-only: it ${state.readOnly}`,
    );
  };
}

function checkedSchema(schema: PrimaryState['schema'], writesUnavailable: string | undefined): Readiness {
  if (schema.applied < schema.expected) {
    throw new ApiError(
      503,
      'service_unavailable',
      `The database schema is at version ${schema.applied} but this service needs version ${schema.expected}; run npm run migrate.`,
    );
  }
  return { schemaVersion: schema.applied, writesUnavailable };
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
 * instance out of the balancer would not help). Nor does the primary alone
 * (see readinessCheck): `writes: "unavailable"` says it is away or read-only. The database part of
 * /readyz may be up to httpLimits.readinessMaxAgeMs old.
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  db: Database,
  checkReadiness: () => Promise<Readiness>,
): void {
  const probe = { config: { rateLimit: false as const, probe: true }, logLevel: 'warn' as const };

  app.get('/healthz', probe, async () => ({ status: 'ok' }));

  app.get('/readyz', probe, async () => {
    const { writesUnavailable } = await checkReadiness();
    const { reads, replicas } = db.readStatus();
    return {
      status: 'ready',
      // Only the kind of trouble: the reason, with the driver's words, is in the log.
      ...(writesUnavailable === undefined ? {} : { writes: 'unavailable' }),
      reads,
      ...(replicas.length > 0 ? { replicas: replicas.map((replica) => publicReplicaState(replica.state)) } : {}),
    };
  });
}
