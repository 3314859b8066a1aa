import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DurationSeries, ServiceMetrics } from '../../observability/metrics.js';
import { idempotentOperations, listOperations, loadOpenApiDocument } from '../../openapi/document.js';
import { routeOf } from '../pipeline.js';
import type { CutRequest } from '../server/parserErrors.js';

/** The operation label of requests that matched no route: one value, never the raw path. */
export const unknownOperation = 'unknown';

/**
 * The operation label of requests Node's parser cut before any route
 * answered them (400 not HTTP, 408 too slow, 431 headers too large): no
 * operationId can take this name.
 */
export const cutOperation = '(cut before routing)';

/** The method label of such a request whose request line was not read. */
const unreadMethod = 'unknown';

/** Observes a request the parser cut; nothing when nothing records metrics. */
export function cutRequestMetric(metrics: ServiceMetrics): (cut: CutRequest) => void {
  if (metrics.registry === undefined) return () => undefined;
  return ({ method, status, seconds }) => {
    metrics.durationSeries(cutOperation, method ?? unreadMethod, status).observe(seconds);
  };
}

/**
 * One histogram observation per API request (and per unmatched request),
 * after the response (an onResponse step). The series of each (operation,
 * method, status) is looked up once and kept, so a request costs three map
 * lookups and an observe. Probes and docs (routes without an operationId)
 * are not recorded. Undefined when nothing records metrics.
 */
export function requestMetricsStep(
  metrics: ServiceMetrics,
): ((request: FastifyRequest, reply: FastifyReply) => void) | undefined {
  if (metrics.registry === undefined) return undefined;
  // The 5xx each operation declares exist from the start: the availability objectives' rules
  // (deploy/prometheus/objectives.yml) take rate() over them, which misses a series' first value.
  // So do the replays of each operation that takes an Idempotency-Key.
  const spec = loadOpenApiDocument();
  for (const { method, operation } of listOperations(spec))
    for (const status of Object.keys(operation.responses ?? {}))
      if (/^5[0-9][0-9]$/.test(status)) metrics.declareDurations(operation.operationId, method, Number(status));
  for (const { operation } of idempotentOperations(spec)) metrics.declareReplays(operation.operationId);
  // (operation, method) -> status code -> series: numbers and strings the
  // request already has, no key built per request.
  const series = new Map<string, Map<string, Map<number, DurationSeries>>>();
  function seriesOf(operation: string, method: string, statusCode: number): DurationSeries {
    let methods = series.get(operation);
    if (methods === undefined) series.set(operation, (methods = new Map<string, Map<number, DurationSeries>>()));
    let statuses = methods.get(method);
    if (statuses === undefined) methods.set(method, (statuses = new Map<number, DurationSeries>()));
    let found = statuses.get(statusCode);
    if (found === undefined) {
      found = metrics.durationSeries(operation, method, statusCode);
      statuses.set(statusCode, found);
    }
    return found;
  }
  return function recordDuration(request: FastifyRequest, reply: FastifyReply): void {
    const route = routeOf(request);
    const operation = route.config.operationId ?? (route.url === undefined ? unknownOperation : undefined);
    if (operation !== undefined)
      seriesOf(operation, request.method, reply.statusCode).observe(reply.elapsedTime / 1000);
  };
}
