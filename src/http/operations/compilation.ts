import type { FastifyInstance } from 'fastify';
import type { DeferredCompilation } from './deferredCompile.js';
import { validatorCompiler } from './validation.js';

/**
 * The first requests after listening (the readiness probe, the first
 * traffic) compile what they need on demand; the rest waits this long, so
 * that compiling it does not delay them on a one-core container. Long enough
 * for a probe's round trip, short enough that a schema ajv refuses is still
 * reported within a second of the start.
 */
const warmUpDelayMs = 500;

/** Validators and serializers are compiled on first use, the rest soon after listening. */
export function compileOnDemand(app: FastifyInstance, deferred: DeferredCompilation): void {
  app.setValidatorCompiler(validatorCompiler(deferred));
  let stopWarmUp = (): void => undefined;
  app.addHook('onListen', (done) => {
    const listenedAt = performance.now();
    stopWarmUp = deferred.warmAll(
      (error) => {
        app.log.error({ err: error }, 'a schema of openapi.yaml does not compile');
      },
      warmUpDelayMs,
      // Said once per start: when the instance has all its validators and
      // serializers, so no later request pays for a compilation.
      (compiled) => {
        app.log.info({ compiled, ms: Math.round(performance.now() - listenedAt) }, 'schemas compiled');
      },
    );
    done();
  });
  app.addHook('onClose', (_app, done) => {
    stopWarmUp();
    done();
  });
}
