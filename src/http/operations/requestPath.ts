import type { FastifyRequest } from 'fastify';

const percentEscape = /%([0-9A-Fa-f]{2})/g;
const unreserved = /^[A-Za-z0-9\-._~]$/;

/**
 * The request's path as the router reads it, for every step that compares
 * paths itself (the path order, the 404 and 405): the query left out, and
 * normalised as RFC 3986 §6.2.2 says equivalent URIs compare, an escaped
 * unreserved character decoded (`%65xports` is `exports`) and the hex digits
 * of any other escape in upper case. The router decodes escapes too, so
 * without this a step could judge `/things/%65xports` a path the route then
 * serves as `/things/exports`.
 */
export function normalisedPath(request: FastifyRequest): string {
  const path = request.url.split('?', 1)[0] ?? '';
  return path.replace(percentEscape, (escape, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return unreserved.test(char) ? char : escape.toUpperCase();
  });
}
