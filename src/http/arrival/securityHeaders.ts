import type { FastifyReply, FastifyRequest } from 'fastify';
import { deprecationHeadersFor } from '../operations/deprecation.js';
import { routeOf, type OperationRoute, type Step } from '../pipeline.js';

/** Headers every response carries, including those written straight to the socket. */
export const everyResponseHeaders = { 'x-content-type-options': 'nosniff' } as const;

/**
 * A step on arrival: nosniff on every response (a browser never reads an
 * error body as HTML or script), and no-store on the API's authenticated
 * routes (a shared cache never keeps one client's pets or errors). A
 * deprecated operation's Deprecation, Sunset and Link headers, computed once
 * from the spec (contract/deprecation.ts), are set here too: one hook per
 * request instead of one more onSend hook.
 */
export function setSecurityHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(everyResponseHeaders);
  const config = routeOf(request).config;
  if (config.securitySchemes?.length) reply.header('cache-control', 'no-store');
  if (config.deprecationHeaders) reply.headers(deprecationHeadersFor(config.deprecationHeaders, request.params));
}

/**
 * setSecurityHeaders and echoRequestId compiled for an operation's route:
 * its constant headers (nosniff, no-store when it takes a key, its
 * deprecation headers) joined once at start-up into one object and written
 * with one call; only a Link naming a path parameter is filled per request.
 */
export function responseHeadersFor(route: OperationRoute): Step {
  const constant: Record<string, string> = { ...everyResponseHeaders };
  if (route.securitySchemes.length > 0) constant['cache-control'] = 'no-store';
  const deprecation = route.deprecationHeaders;
  if (deprecation !== undefined) Object.assign(constant, deprecation);
  const perRequest = deprecation !== undefined && deprecationHeadersFor(deprecation, {}) !== deprecation;
  if (perRequest) {
    return function setRouteHeadersAndLink(request: FastifyRequest, reply: FastifyReply): void {
      reply.header('x-request-id', request.id);
      reply.headers(constant);
      reply.headers(deprecationHeadersFor(deprecation, request.params));
    };
  }
  return function setRouteHeaders(request: FastifyRequest, reply: FastifyReply): void {
    reply.header('x-request-id', request.id);
    reply.headers(constant);
  };
}
