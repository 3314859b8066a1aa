import type { FastifyInstance } from 'fastify';
import type { OpenApiDocument } from '../../openapi/document.js';
import type { HttpLimits } from '../limits.js';
import type { OperationRoute, Step } from '../pipeline.js';
import { registerDraining, type DrainState } from './draining.js';
import { refuseUnknownExpectation } from './expectHeader.js';
import { requireHostHeader } from './hostHeader.js';
import { registerLoadShedding, type LoadShedding } from './loadShedding.js';
import { refuseRepeatedHeaders, singleValuedHeaders } from './repeatedHeaders.js';
import { echoRequestId } from './requestId.js';
import { responseHeadersFor, setSecurityHeaders } from './securityHeaders.js';
import { operationStartupGate, readinessOf, startupGate } from './startupGate.js';

export interface Arrival {
  /** The onRequest steps, in order, for any request. */
  steps: Step[];
  /** The same steps compiled for an operation's route (its headers joined, its route checks settled). */
  stepsFor: (route: OperationRoute) => Step[];
  drain: DrainState;
  /** True once the database is ready (always, without a start-up to wait for). */
  isReady: () => boolean;
  loadShedding: LoadShedding;
}

/**
 * On arrival: name the request, set the headers every answer carries, refuse
 * what no operation could serve (no Host, a repeated single-valued header, an
 * unknown expectation), then new work once closing, before the database is
 * ready, or when overloaded.
 */
export function arrivalStage(
  app: FastifyInstance,
  spec: OpenApiDocument,
  limits: HttpLimits,
  databaseReady: Promise<void> | undefined,
  countShed: (reason: string) => void,
): Arrival {
  const drain = registerDraining(app);
  const refuseRepeated = refuseRepeatedHeaders(singleValuedHeaders(spec));
  const checks: Step[] = [requireHostHeader, refuseRepeated, refuseUnknownExpectation, drain.onArrival];
  const isReady = readinessOf(databaseReady);
  const loadShedding = registerLoadShedding(app, limits.loadShedding, countShed, databaseReady);
  const steps: Step[] = [echoRequestId, setSecurityHeaders, ...checks];
  if (databaseReady) steps.push(startupGate(isReady));
  steps.push(loadShedding.shed);
  const stepsFor = (route: OperationRoute): Step[] => [
    responseHeadersFor(route),
    ...checks,
    ...(databaseReady ? [operationStartupGate(isReady)] : []),
    loadShedding.shedOperation,
  ];
  return { steps, stepsFor, drain, isReady, loadShedding };
}
