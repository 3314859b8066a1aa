import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import type { LoadSheddingLimits } from '../limits.js';
import { routeOf, type Step } from '../pipeline.js';

/**
 * The event-loop delay histogram's resolution, ms: it samples the loop this
 * often, and its mean includes this much of its own timer (subtracted), as
 * @fastify/under-pressure measures it.
 */
const resolutionMs = 10;

export interface LoadShedding {
  /** An arrival step: the 503 Error object for an API request while the mean event-loop delay is past the limit. */
  shed: Step;
  /** shed for an operation's route: the load alone decides. */
  shedOperation: Step;
  /** Whether the process is over the limit now (readiness). */
  isOverloaded: () => boolean;
}

/**
 * The reasons an API request is shed for, as pets_load_shed_requests_total's
 * `reason` label says them: only the event-loop delay is watched (see below).
 * The alerts and docs/operations.md are checked against this list.
 */
export const shedReasons = ['eventLoopDelay'] as const;
export type ShedReason = (typeof shedReasons)[number];

const never: LoadShedding = { shed: () => undefined, shedOperation: () => undefined, isOverloaded: () => false };

/**
 * Samples the event-loop delay (the mean over each sampleIntervalMs, as
 * @fastify/under-pressure does). Past the limit, API requests (routes with
 * an operationId) get the 503 Error object with Retry-After before any key
 * lookup or query; probes, docs and CORS preflights go on, so /healthz stays
 * 200 and /readyz can say 503 itself. Only the delay is watched: it is what
 * a waiting client feels, whereas a busy event loop (utilisation near 1) is
 * a healthy one at full use, and the heap has --max-old-space-size and the
 * container's memory limit. The check is a step of the arrival pipeline (a
 * comparison per request) rather than a hook of its own.
 *
 * The first two samples after the start-up are ignored: they hold the
 * start-up itself (loading, compiling schemas, preparing the database once
 * databaseReady is given), which blocks the loop once and says nothing about
 * load.
 */
export function registerLoadShedding(
  app: FastifyInstance,
  limits: LoadSheddingLimits,
  countShed: (reason: ShedReason) => void,
  databaseReady?: Promise<void>,
): LoadShedding {
  if (limits.maxEventLoopDelayMs <= 0) return never;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  let delayMs = 0;
  let warm = false;
  let sampler: NodeJS.Timeout | undefined;
  let warmUp: NodeJS.Timeout | undefined;
  const sample = () => {
    // No sample in a whole interval: the loop never turned; as overloaded as it gets.
    delayMs = Number.isNaN(histogram.mean) ? Infinity : Math.max(0, histogram.mean / 1e6 - resolutionMs);
    histogram.reset();
  };
  histogram.enable();
  sampler = setInterval(sample, limits.sampleIntervalMs).unref();
  let closed = false;
  const startWarmUp = () => {
    if (closed) return;
    warmUp = setTimeout(() => {
      warm = true;
    }, 2 * limits.sampleIntervalMs).unref();
  };
  app.addHook('onReady', function warmUpOnceStarted(done) {
    // The server listens before the database is prepared: that preparation is start-up too.
    if (databaseReady) void databaseReady.then(startWarmUp);
    else startWarmUp();
    done();
  });
  app.addHook('onClose', (_app, done) => {
    closed = true;
    clearInterval(sampler);
    clearTimeout(warmUp);
    sampler = undefined;
    histogram.disable();
    done();
  });
  const overloaded = new ApiError(503, 'service_unavailable', 'The service is overloaded; retry later.', {
    'retry-after': String(limits.retryAfterSeconds),
  });
  const isOverloaded = () => warm && delayMs > limits.maxEventLoopDelayMs;
  return {
    isOverloaded,
    shed(request: FastifyRequest) {
      if (!isOverloaded() || routeOf(request).config.operationId === undefined) return;
      countShed(shedReasons[0]);
      throw overloaded;
    },
    shedOperation() {
      if (!isOverloaded()) return;
      countShed(shedReasons[0]);
      throw overloaded;
    },
  };
}
