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

/**
 * Validators and serializers are compiled on first use, the rest soon after
 * listening; or, with beforeListening (a cluster worker, which takes no
 * connection until it is ready), all of them before listening.
 */
export function compileOnDemand(app: FastifyInstance, deferred: DeferredCompilation, beforeListening = false): void {
  app.setValidatorCompiler(validatorCompiler(deferred));
  let stopWarmUp = (): void => undefined;
  const warmUp = (afterMs: number, onDone?: () => void) => {
    const startedAt = performance.now();
    stopWarmUp = deferred.warmAll(
      (error) => {
        app.log.error({ err: error }, 'a schema of openapi.yaml does not compile');
      },
      afterMs,
      // Said once per start: when the instance has all its validators and
      // serializers, so no later request pays for a compilation.
      (compiled) => {
        app.log.info({ compiled, ms: Math.round(performance.now() - startedAt) }, 'schemas compiled');
        onDone?.();
      },
    );
  };
  if (beforeListening)
    app.addHook('onReady', async () => {
      await new Promise<void>((resolve) => {
        warmUp(0, resolve);
        // Closed during the warm-up: the start ends there too.
        const stop = stopWarmUp;
        stopWarmUp = () => {
          stop();
          resolve();
        };
      });
    });
  else
    app.addHook('onListen', (done) => {
      warmUp(warmUpDelayMs);
      done();
    });
  app.addHook('onClose', (_app, done) => {
    stopWarmUp();
    done();
  });
}
