import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import type { LoadSheddingLimits } from '../limits.js';
import { routeOf } from '../pipeline.js';

/**
 * Registers @fastify/under-pressure, which samples the event-loop delay.
 * Past the limit, API requests (routes with an operationId) get the 503
 * Error object with Retry-After before any key lookup or query; probes, docs
 * and CORS preflights go on, so /healthz stays 200 and /readyz can say 503
 * itself. Returns whether the process is over the limit now. Only the delay
 * is watched: it is what a waiting client feels, whereas a busy event loop
 * (utilisation near 1) is a healthy one at full use, and the heap has
 * --max-old-space-size and the container's memory limit.
 *
 * The first two samples after the app is ready are ignored: they hold the
 * start-up itself (loading, compiling schemas), which blocks the loop once
 * and says nothing about load.
 */
export async function registerLoadShedding(
  app: FastifyInstance,
  limits: LoadSheddingLimits,
  countShed: (reason: string) => void,
): Promise<() => boolean> {
  if (limits.maxEventLoopDelayMs <= 0) return () => false;
  const retryAfter = limits.retryAfterSeconds;
  let warm = false;
  app.addHook('onReady', function startWarmUp(done) {
    setTimeout(() => {
      warm = true;
    }, 2 * limits.sampleIntervalMs).unref();
    done();
  });
  const overloaded = new ApiError(503, 'service_unavailable', 'The service is overloaded; retry later.', {
    'retry-after': String(retryAfter),
  });
  await app.register(underPressure, {
    maxEventLoopDelay: limits.maxEventLoopDelayMs,
    sampleInterval: limits.sampleIntervalMs,
    retryAfter,
    pressureHandler(request: FastifyRequest, _reply, type) {
      if (!warm || routeOf(request).config.operationId === undefined) return;
      countShed(type);
      return Promise.reject(overloaded);
    },
  });
  return () => warm && app.isUnderPressure();
}
