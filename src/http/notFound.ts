import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiPrefix, listOperations, type OpenApiDocument } from '../contract.js';
import { ApiError } from '../errors.js';

interface PathMethods {
  pattern: RegExp;
  methods: string[];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One matcher per path of the contract: /v1/pets/{petId} matches /v1/pets/<anything but a slash>. */
function pathMatchers(spec: OpenApiDocument): PathMethods[] {
  const byPath = new Map<string, string[]>();
  for (const { method, path } of listOperations(spec)) {
    byPath.set(path, [...(byPath.get(path) ?? []), method]);
  }
  return [...byPath].map(([path, methods]) => {
    const source = (apiPrefix + path).split(/\{[^}]+\}/).map(escapeRegExp).join('[^/]+');
    return { pattern: new RegExp(`^${source}$`), methods };
  });
}

/**
 * Unknown routes answer 404; a known path asked with a method it does not
 * have answers 405 with the Allow header listing the methods it does have.
 */
export function notFoundHandler(spec: OpenApiDocument, extraMethods: (methods: string[]) => string[] = (m) => m) {
  const matchers = pathMatchers(spec);
  return function handleNotFound(request: FastifyRequest, _reply: FastifyReply): never {
    const path = request.url.split('?', 1)[0] ?? '';
    const known = matchers.find((matcher) => matcher.pattern.test(path));
    if (known) {
      const allowed = extraMethods(known.methods);
      throw new ApiError(405, 'method_not_allowed', `Method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`, {
        allow: allowed.join(', '),
      });
    }
    throw new ApiError(404, 'not_found', `No route ${request.method} ${path}.`);
  };
}
