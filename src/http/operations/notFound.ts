import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { apiBasePath, listOperations, type OpenApiDocument } from '../../openapi/document.js';
import { ApiError } from '../../errors.js';
import { excerpt } from '../errors/excerpt.js';
import { normalisedPath } from './requestPath.js';

interface PathMethods {
  path: string;
  pattern: RegExp;
  methods: string[];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const isTemplated = (segment: string) => /^\{[^}]+\}$/.test(segment);

/**
 * OpenAPI's order of path matching (3.1, Paths Object): at the first segment where two paths differ, a literal
 * one (`/pets/exports`) is matched before a parameter (`/pets/{petId}`).
 */
function matchedFirst(a: string, b: string): number {
  const [left, right] = [a.split('/').map(isTemplated), b.split('/').map(isTemplated)];
  const index = left.findIndex((templated, at) => at < right.length && templated !== right[at]);
  if (index < 0) return 0;
  return left[index] ? 1 : -1;
}

/** Whether one URL can match both paths: as many segments, each the same literal or a parameter on one side. */
function overlap(a: string, b: string): boolean {
  const [left, right] = [a.split('/'), b.split('/')];
  return (
    left.length === right.length &&
    left.every((segment, index) => {
      const other = right[index] ?? '';
      return segment === other || isTemplated(segment) || isTemplated(other);
    })
  );
}

/** One matcher per path of the contract, in OpenAPI's matching order: /v1/pets/{petId} matches /v1/pets/<anything but a slash>. */
function pathMatchers(spec: OpenApiDocument): PathMethods[] {
  const byPath = new Map<string, string[]>();
  for (const { method, path } of listOperations(spec)) {
    byPath.set(path, [...(byPath.get(path) ?? []), method]);
  }
  return [...byPath]
    .map(([path, methods]) => {
      const source = (apiBasePath() + path)
        .split(/\{[^}]+\}/)
        .map(escapeRegExp)
        .join('[^/]+');
      return { path, pattern: new RegExp(`^${source}$`), methods };
    })
    .sort((a, b) => matchedFirst(a.path, b.path));
}

/**
 * For the route of a path with a parameter, the step that hands a URL OpenAPI matches to another path first
 * (`/pets/exports` before `/pets/{petId}`) to that path: the router prefers a literal path only for the
 * methods it declares, so GET /v1/pets/exports reaches getPet's route where only POST /pets/exports exists,
 * and is that path's 405. Undefined where no path comes first (no cost on the route).
 */
export function pathsMatchedBefore(spec: OpenApiDocument, path: string) {
  const matchers = pathMatchers(spec);
  const own = matchers.findIndex((matcher) => matcher.path === path);
  const before = matchers.slice(0, Math.max(own, 0)).filter((matcher) => overlap(matcher.path, path));
  if (before.length === 0) return undefined;
  return function answerPathMatchedBefore(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ): void {
    const path = normalisedPath(request);
    done(before.some((matcher) => matcher.pattern.test(path)) ? unrouted(before, request) : undefined);
  };
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
    throw unrouted(matchers, request);
  };
}

/** 405 with Allow on the first path (in matching order) that matches the URL; 404 on none. */
function unrouted(matchers: PathMethods[], request: FastifyRequest): ApiError {
  const path = normalisedPath(request);
  const known = matchers.find((matcher) => matcher.pattern.test(path));
  if (known) {
    const allowed = known.methods;
    return new ApiError(
      405,
      'method_not_allowed',
      `Method ${excerpt(request.method)} is not allowed on ${excerpt(path)}; allowed: ${allowed.join(', ')}.`,
      {
        allow: allowed.join(', '),
      },
    );
  }
  return new ApiError(404, 'not_found', `No route ${excerpt(request.method)} ${excerpt(path)}.`);
}
