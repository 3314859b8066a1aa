import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/index.js';
import type { ServiceMetrics } from '../../observability/metrics.js';
import type { DrainState } from '../arrival/draining.js';
import { readinessCheck, registerHealthRoutes } from './health.js';

export interface ProbeInputs {
  db: Database;
  drain: DrainState;
  isOverloaded: () => boolean;
  /** True once the database is ready. */
  isReady: () => boolean;
  readinessMaxAgeMs: number;
}

/** /healthz and /readyz, and the readiness, draining, shedding and pool gauges read at scrape time. */
export function probesStage(app: FastifyInstance, inputs: ProbeInputs, metrics: ServiceMetrics): void {
  const { db, isReady } = inputs;
  const checkReadiness = readinessCheck(db, inputs.drain, inputs.isOverloaded, inputs.readinessMaxAgeMs);
  registerHealthRoutes(app, db, checkReadiness);
  metrics.watchReadiness(() => (isReady() ? checkReadiness().then(() => true) : Promise.resolve(false)));
  metrics.watchPool(() => db.poolStatus());
  metrics.watchDraining(() => inputs.drain.draining());
  metrics.watchShedding(inputs.isOverloaded);
}
