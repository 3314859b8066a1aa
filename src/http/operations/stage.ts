import responseValidation from '@fastify/response-validation';
import type { FastifyInstance } from 'fastify';
import type { HandlerMap } from '../../handlers/types.js';
import { loadRouteTable, type OpenApiDocument } from '../../openapi/document.js';
import type { ErrorAnswer } from '../errors/stage.js';
import type { DeferredCompilation } from './deferredCompile.js';
import { operationResolver, registerOperations, type PathCompiler } from './glue.js';
import { responseValidationAjv } from './responseAjv.js';

export interface OperationsInputs {
  spec: OpenApiDocument;
  handlers: HandlerMap;
  deferred: DeferredCompilation;
  handleError: ErrorAnswer;
  /** Each operation's onRequest path, compiled for its route from the stages' steps. */
  compilePath: PathCompiler;
  /** The clock an operation's sunset (x-sunset) is compared with. */
  now: (() => number) | undefined;
}

/**
 * The spec's operations, each wired to its handler with request validation,
 * and every response validated against the spec.
 */
export async function operationsStage(app: FastifyInstance, inputs: OperationsInputs): Promise<void> {
  // Always on: a response outside the contract becomes a logged 500 rather
  // than reaching a client, and the check costs no measurable throughput
  // (docs/performance.md).
  // Registered before the glue so its onRoute hook sees every API route.
  await app.register(responseValidation, {
    // The plugin's typings name ajv's default class; this is its 2020-12
    // sibling, which the plugin uses the same way.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
    ajv: responseValidationAjv(inputs.deferred, { coerceTypes: false, useDefaults: false, removeAdditional: false }),
  });
  await app.register(async (api) => {
    // The second layer of the error handler (see errorHandler).
    api.setErrorHandler(inputs.handleError);
    registerOperations(
      api,
      loadRouteTable(),
      operationResolver(inputs.spec, inputs.handlers, inputs.compilePath, inputs.now),
    );
  });
}
