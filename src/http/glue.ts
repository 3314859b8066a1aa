import type { FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify';
import { listOperations, securityOf, type OpenApiDocument } from '../contract.js';
import { invalidRequest } from '../errors.js';
import { deprecationHeadersOf, deprecationHook } from './deprecation.js';
import type { Handler, HandlerInput, HandlerMap, OperationId } from '../handlers/types.js';

function toRouteHandler<K extends OperationId>(handler: Handler<K>): RouteHandlerMethod {
  return async function route(request: FastifyRequest, reply: FastifyReply) {
    const input = { params: request.params, query: request.query, body: request.body, request } as HandlerInput<K>;
    const result = await handler(input);
    reply.code(Number(result.status));
    if (result.headers) reply.headers(result.headers);
    return result.body;
  };
}

// Fastify picks the body schema by Content-Type, so a request with no body
// and no Content-Type would skip body validation altogether.
async function requireBody(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) throw invalidRequest('The request body is required: send a JSON object with Content-Type: application/json.');
}

/**
 * fastify-openapi-glue's operationResolver: for each operation of the spec,
 * its handler, the route config the auth hook reads (the security schemes
 * the operation requires) and the deprecation headers, all taken from the spec.
 */
export function operationResolver(spec: OpenApiDocument, handlers: HandlerMap) {
  const operations = new Map(listOperations(spec).map((entry) => [entry.operation.operationId, entry.operation]));
  // Computed up front so that a malformed deprecation fails at start.
  const deprecations = new Map([...operations].map(([id, operation]) => [id, deprecationHeadersOf(operation)]));
  return (operationId: string) => {
    const operation = operations.get(operationId);
    if (!operation || !(operationId in handlers)) {
      throw new Error(`openapi.yaml has operation ${operationId} but src/handlers has no handler for it`);
    }
    const securitySchemes = [...new Set(securityOf(spec, operation).flatMap((requirement) => Object.keys(requirement)))];
    const deprecation = deprecations.get(operationId);
    // The glue merges these into the route it builds (method and url come
    // from the spec); its typings ask for a whole RouteOptions.
    return {
      handler: toRouteHandler(handlers[operationId as OperationId] as Handler<OperationId>),
      config: { operationId, securitySchemes },
      ...(operation.requestBody?.required ? { preValidation: requireBody } : {}),
      ...(deprecation ? { onSend: deprecationHook(deprecation) } : {}),
    } as unknown as RouteOptions;
  };
}
