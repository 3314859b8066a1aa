import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { computeRouteTable } from '../../generators/routeTable.js';
import type { HandlerMap } from '../../src/handlers/types.js';
import { decorateAuthentication } from '../../src/http/admission/authentication.js';
import { answerErrors } from '../../src/http/errors/stage.js';
import { limitsWith } from '../../src/http/limits.js';
import { compileOnDemand } from '../../src/http/operations/compilation.js';
import { DeferredCompilation } from '../../src/http/operations/deferredCompile.js';
import { operationsStage } from '../../src/http/operations/stage.js';
import { routedPipeline, type OperationRoute, type Step } from '../../src/http/pipeline.js';
import { createServer } from '../../src/http/server/fastifyServer.js';
import { responseHeadersFor } from '../../src/http/arrival/securityHeaders.js';
import { registerContinue } from '../../src/http/arrival/expectHeader.js';
import type { OpenApiDocument } from '../../src/openapi/document.js';

/**
 * The operations stage of the app (glue, validation, serialization,
 * conditional requests, the Error object) for a spec other than
 * openapi.yaml, with handlers of the test's own: what the HTTP layer does
 * for a shape today's spec does not have. On arrival the route's own headers (a deprecation's Link among
 * them) and Expect: 100-continue; no database; the other onRequest steps of each operation's route
 * (admission) only as the test's `stepsFor` compiles them.
 */
export async function startSpecApp(
  t: Test,
  spec: OpenApiDocument,
  handlers: Record<string, (input: never) => Promise<unknown>>,
  stepsFor?: (route: OperationRoute) => Step[],
): Promise<FastifyInstance> {
  const deferred = new DeferredCompilation();
  const limits = limitsWith({ loadShedding: { maxEventLoopDelayMs: 0 } });
  const app = createServer({
    logger: false,
    keepAliveTimeoutMs: 5000,
    trustProxy: 'false',
    limits,
    deferred,
    observeCut: () => undefined,
    observeAbandoned: () => undefined,
  });
  compileOnDemand(app, deferred);
  app.addHook('onRequest', routedPipeline('arrival', []));
  registerContinue(app, limits.bodyLimitBytes);
  if (stepsFor) {
    decorateAuthentication(app);
    app.addHook('onRequest', routedPipeline('whole', []));
  }
  const handleError = answerErrors(app, spec, limits.bodyLimitBytes, () => undefined);
  await operationsStage(app, {
    spec,
    handlers: handlers as unknown as HandlerMap,
    deferred,
    handleError,
    compilePath: (route) => ({
      arrival: [responseHeadersFor(route)],
      admission: [],
      whole: stepsFor?.(route) ?? [],
    }),
    now: undefined,
    routes: await computeRouteTable(spec),
  });
  await app.ready();
  t.teardown(() => app.close());
  return app;
}
