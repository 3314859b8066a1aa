import type { FastifyReply, FastifyRequest } from 'fastify';
import { deprecationHeadersFor } from '../operations/deprecation.js';
import { routeOf } from '../pipeline.js';

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
