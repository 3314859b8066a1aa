import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { ApiError } from '../../errors.js';
import { routeOf } from '../pipeline.js';

export type LoadSheddingConfig = Pick<
  Config,
  | 'LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS'
  | 'LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION'
  | 'LOAD_SHEDDING_MAX_HEAP_USED_BYTES'
  | 'LOAD_SHEDDING_SAMPLE_INTERVAL_MS'
  | 'LOAD_SHEDDING_RETRY_AFTER_SECONDS'
>;

/**
 * Registers @fastify/under-pressure, which samples event-loop delay,
 * event-loop utilisation (over each sample interval, not since start) and
 * heap. Past a threshold, API requests (routes with an operationId) get the
 * 503 Error object with Retry-After before any key lookup or query; probes,
 * docs and CORS preflights go on, so /healthz stays 200 and /readyz can say
 * 503 itself. Returns whether the process is over a threshold now.
 *
 * The first two samples after the app is ready are ignored: they hold the
 * start-up itself (loading, compiling schemas), which blocks the loop once
 * and says nothing about load.
 */
export async function registerLoadShedding(
  app: FastifyInstance,
  config: LoadSheddingConfig,
  countShed: (reason: string) => void,
): Promise<() => boolean> {
  const enabled =
    config.LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS > 0 ||
    config.LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION > 0 ||
    config.LOAD_SHEDDING_MAX_HEAP_USED_BYTES > 0;
  if (!enabled) return () => false;
  const retryAfter = config.LOAD_SHEDDING_RETRY_AFTER_SECONDS;
  let warm = false;
  app.addHook('onReady', function startWarmUp(done) {
    setTimeout(() => {
      warm = true;
    }, 2 * config.LOAD_SHEDDING_SAMPLE_INTERVAL_MS).unref();
    done();
  });
  const overloaded = new ApiError(503, 'service_unavailable', 'The service is overloaded; retry later.', {
    'retry-after': String(retryAfter),
  });
  await app.register(underPressure, {
    maxEventLoopDelay: config.LOAD_SHEDDING_MAX_EVENT_LOOP_DELAY_MS,
    maxEventLoopUtilization: config.LOAD_SHEDDING_MAX_EVENT_LOOP_UTILIZATION,
    eventLoopUtilizationMode: 'interval',
    maxHeapUsedBytes: config.LOAD_SHEDDING_MAX_HEAP_USED_BYTES,
    sampleInterval: config.LOAD_SHEDDING_SAMPLE_INTERVAL_MS,
    retryAfter,
    pressureHandler(request: FastifyRequest, _reply, type) {
      if (!warm || routeOf(request).config.operationId === undefined) return;
      countShed(type);
      return Promise.reject(overloaded);
    },
  });
  return () => warm && app.isUnderPressure();
}
