import type { FastifyInstance } from 'fastify';
import type { HandlerMap } from '../../handlers/types.js';
import { loadRouteTable, type OpenApiDocument, type RouteEntry } from '../../openapi/document.js';
import type { ErrorAnswer } from '../errors/stage.js';
import type { DeferredCompilation } from './deferredCompile.js';
import { operationResolver, registerOperations, type PathCompiler } from './glue.js';

export interface OperationsInputs {
  spec: OpenApiDocument;
  handlers: HandlerMap;
  deferred: DeferredCompilation;
  handleError: ErrorAnswer;
  /** Each operation's onRequest path, compiled for its route from the stages' steps. */
  compilePath: PathCompiler;
  /** The clock an operation's sunset (x-sunset) is compared with. */
  now: (() => number) | undefined;
  /** The spec's route table; the one `npm run generate` wrote when absent (a test's spec brings its own). */
  routes?: readonly RouteEntry[];
}

/**
 * The spec's operations, each wired to its handler with request validation.
 * Every response is validated against the spec by its serializer (always
 * on, see serialization.ts): one outside the contract becomes a logged 500
 * rather than reaching a client.
 */
export async function operationsStage(app: FastifyInstance, inputs: OperationsInputs): Promise<void> {
  await app.register(async (api) => {
    // The second layer of the error handler (see errorHandler).
    api.setErrorHandler(inputs.handleError);
    const routes = inputs.routes ?? loadRouteTable();
    registerOperations(
      api,
      routes,
      operationResolver(inputs.spec, inputs.handlers, inputs.compilePath, routes, inputs.now),
    );
  });
}
