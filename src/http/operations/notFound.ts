import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiBasePath, listOperations, type OpenApiDocument } from '../../openapi/document.js';
import { ApiError } from '../../errors.js';
import { excerpt } from '../errors/excerpt.js';

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
    const source = (apiBasePath() + path)
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
  return answerUnrouted(pathMatchers(spec));
}

/**
 * The same answer as an onRequest step, so that it comes before anything
 * fastify does with the body of a request no route takes: Content-Type
 * checks (a QUERY without one is a 400 there, an unparsable one a 415), body
 * parsing and its limits. Whatever the body or headers, an undeclared method
 * on a known path is a 405 and an unknown path a 404.
 */
export function refuseUnrouted(spec: OpenApiDocument) {
  const answer = answerUnrouted(pathMatchers(spec));
  return function refuseUnroutedStep(request: FastifyRequest, reply: FastifyReply): void {
    if (request.is404) answer(request, reply);
  };
}

function answerUnrouted(matchers: PathMethods[]) {
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
