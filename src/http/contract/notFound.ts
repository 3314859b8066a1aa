import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiBasePath, listOperations, type OpenApiDocument } from '../../openapi/document.js';
import { ApiError } from '../../errors.js';
import { excerpt } from './excerpt.js';

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
    const source = (apiBasePath + path)
      .split(/\{[^}]+\}/)
      .map(escapeRegExp)
      .join('[^/]+');
    return { pattern: new RegExp(`^${source}$`), methods };
  });
}

/**
 * Unknown routes answer 404; a known path asked with a method it does not
 * have answers 405 with the Allow header listing the methods it does have.
 */
export function notFoundHandler(spec: OpenApiDocument) {
  const matchers = pathMatchers(spec);
  return function handleNotFound(request: FastifyRequest, _reply: FastifyReply): never {
    const path = request.url.split('?', 1)[0] ?? '';
    const known = matchers.find((matcher) => matcher.pattern.test(path));
    if (known) {
      const allowed = known.methods;
      throw new ApiError(
        405,
        'method_not_allowed',
        `Method ${excerpt(request.method)} is not allowed on ${excerpt(path)}; allowed: ${allowed.join(', ')}.`,
        {
          allow: allowed.join(', '),
        },
      );
    }
    throw new ApiError(404, 'not_found', `No route ${excerpt(request.method)} ${excerpt(path)}.`);
  };
}
