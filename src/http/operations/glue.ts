import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RouteHandlerMethod,
  RouteOptions,
} from 'fastify';
import type { Handler, HandlerInput, HandlerMap, OperationId } from '../../handlers/types.js';
import { ApiError, invalidRequest, type ErrorBody } from '../../errors.js';
import {
  listOperations,
  parametersOf,
  scopeRequirementsOf,
  securityOf,
  type OpenApiDocument,
  type RouteEntry,
} from '../../openapi/document.js';
import { essenceOf } from '../../openapi/mediaTypes.js';
import { answerFor, answeredMediaTypesOf } from './answer.js';
import { bodyLimitOf } from './bodyLimit.js';
import { pathsMatchedBefore } from './notFound.js';
import {
  conditionalFactsOf,
  preconditionFor,
  refuseMalformedConditions,
  type ConditionalFacts,
} from './conditional.js';
import {
  deprecationHeadersFor,
  deprecationHeadersOf,
  sunsetGate,
  sunsetOf,
  withDeprecationLink,
} from './deprecation.js';
import type { CompiledPath, OperationRoute } from '../pipeline.js';
import { assertHeaderValuesWritable } from './headerValues.js';

/** Compiles the onRequest path of an operation's route (app.ts joins the stages' steps). */
export type PathCompiler = (route: OperationRoute) => CompiledPath;

function errorOf(status: number, body: ErrorBody, headers: object | undefined): ApiError {
  return new ApiError(status, body.code, body.message, headers as Record<string, string> | undefined);
}

/** The handler's own Link header (pagination), before the deprecation's is added to it. */
function ownLink(headers: Record<string, string> | undefined): string | undefined {
  if (headers === undefined) return undefined;
  const name = Object.keys(headers).find((key) => key.toLowerCase() === 'link');
  return name === undefined ? undefined : headers[name];
}

function toRouteHandler<K extends OperationId>(
  handler: Handler<K>,
  deprecation: Record<string, string> | undefined,
  headerNames: readonly string[],
  conditional: ConditionalFacts | undefined,
  answeredMediaTypes: Map<number, string>,
): RouteHandlerMethod {
  const answer = answerFor(conditional, answeredMediaTypes);
  return async function route(request: FastifyRequest, reply: FastifyReply) {
    // The declared header parameters under their names in the spec; Node has lower-cased them.
    const headers: Record<string, string> = {};
    for (const name of headerNames) {
      const value = request.headers[name.toLowerCase()];
      if (typeof value === 'string') headers[name] = value;
    }
    const caller = request.apiKeyId === undefined ? undefined : { apiKeyId: request.apiKeyId };
    if (conditional) refuseMalformedConditions(request);
    const checked = conditional && preconditionFor(request, reply, conditional);
    // Validation has run: the parts have the shapes the generated types say.
    const input = {
      params: request.params,
      query: request.query,
      headers,
      body: request.body,
      caller,
      ...(checked ? { precondition: checked.precondition } : {}),
    } as HandlerInput<K>;
    const result = await handler(input);
    const status = Number(result.status);
    if (result.headers) assertHeaderValuesWritable(result.headers);
    // An error result takes the road of a thrown error: one handler logs it and writes the Error object.
    if (status >= 400) throw errorOf(status, result.body as unknown as ErrorBody, result.headers);
    // A write that succeeded without asking whether its If-Match or If-None-Match held: a bug, never a silent success.
    if (checked?.unchecked())
      throw new Error(`The handler of ${conditional?.operationId} succeeded without checking input.precondition`);
    reply.code(status);
    if (result.headers)
      reply.headers(
        withDeprecationLink(result.headers, deprecation && deprecationHeadersFor(deprecation, request.params)),
      );
    return answer(request, reply, status, result.body, ownLink(result.headers));
  };
}

// Fastify picks the body schema by Content-Type, so a request with no body
// and no Content-Type would skip body validation altogether. (Route hooks
// here call `done` rather than return a promise: one promise less per request.)
function requireBody(declared: string[]) {
  const message = `The request body is required: send it with Content-Type: ${declared.join(' or ')}.`;
  return function requireBody(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    if (request.body === undefined) done(invalidRequest(message));
    else done();
  };
}

// Requests are closed: an operation that declares no requestBody takes no content. Refused on arrival, after
// admission (a bad key is still a 401) and the sunset's 410, before a content type is parsed (a 415 it may
// not declare).
function refuseContent(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const length = request.headers['content-length'];
  if (request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0'))
    done(invalidRequest(`${request.method} ${request.routeOptions.url ?? ''} takes no request body; send none.`));
  else done();
}

/**
 * A body of a media type the operation does not declare is a 415 on arrival, before it is parsed: fastify
 * validates a body only against the schema of its own Content-Type, so another type the service parses (a
 * `+json` another operation declares) would otherwise reach the handler unchecked.
 */
function refuseUndeclaredMediaTypes(declared: string[]) {
  const accepted = new Set(declared.map(essenceOf));
  const listed = declared.join(' or ');
  return function refuseUndeclaredMediaType(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ): void {
    const type = request.headers['content-type'];
    if (type === undefined || accepted.has(essenceOf(type))) done();
    else done(new ApiError(415, 'unsupported_media_type', `The request body must be sent as Content-Type: ${listed}.`));
  };
}

/** What the glue merges into the route it builds from the spec (method, url and schemas are its own). */
type RouteParts = Pick<RouteOptions, 'handler' | 'config' | 'onRequest' | 'preValidation' | 'bodyLimit'>;

/**
 * fastify-openapi-glue's operationResolver: for each operation of the spec,
 * its handler, the route config the auth hook reads (the security schemes
 * the operation requires and the scopes its requirements list), the deprecation headers, the 410 after a sunset
 * and conditional requests (conditional.ts), all taken from the spec and
 * the route table. `now` is the clock sunsets are compared with.
 */
export function operationResolver(
  spec: OpenApiDocument,
  handlers: HandlerMap,
  compilePath: PathCompiler,
  routes: readonly RouteEntry[],
  now: () => number = Date.now,
) {
  const entries = listOperations(spec);
  const operations = new Map(entries.map((entry) => [entry.operation.operationId, entry.operation]));
  const pathsOf = new Map(entries.map((entry) => [entry.operation.operationId, entry.path]));
  // Computed up front so that a malformed deprecation fails at start.
  const deprecations = new Map([...operations].map(([id, operation]) => [id, deprecationHeadersOf(operation)]));
  return (route: RouteEntry): RouteOptions => {
    const { operationId, url } = route;
    const operation = operations.get(operationId);
    if (!operation || !(operationId in handlers)) {
      throw new Error(`openapi.yaml has operation ${operationId} but src/handlers has no handler for it`);
    }
    const securitySchemes = [
      ...new Set(securityOf(spec, operation).flatMap((requirement) => Object.keys(requirement))),
    ];
    const parameters = parametersOf(spec, operation);
    const headerNames = parameters.filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name);
    const bodyTypes = Object.keys((operation.requestBody as { content?: object } | undefined)?.content ?? {});
    const preValidation = operation.requestBody?.required ? [requireBody(bodyTypes)] : [];
    const deprecation = deprecations.get(operationId);
    const sunset = sunsetOf(operation);
    const bodyLimit = bodyLimitOf(operation);
    // What the router sent here that OpenAPI matches to a path before this one (a literal segment).
    const matchedBefore = pathsMatchedBefore(spec, pathsOf.get(operationId) ?? '');
    const onRequest = [
      ...(matchedBefore ? [matchedBefore] : []),
      ...(sunset ? [sunsetGate(operation, sunset, now)] : []),
      ...(operation.requestBody ? [refuseUndeclaredMediaTypes(bodyTypes)] : [refuseContent]),
    ];
    const parts: RouteParts = {
      // The handler's success is serialized, validated, tagged and sent by the
      // route's own answer (answer.ts), not by fastify's hooks.
      handler: toRouteHandler(
        handlers[operationId as OperationId] as Handler<OperationId>,
        deprecation,
        headerNames,
        conditionalFactsOf(spec, operation, route, routes),
        answeredMediaTypesOf(spec, operation),
      ),
      // The deprecation headers are set on arrival, with the security headers
      // (no onSend hook per response): every answer of the route carries
      // them, errors included.
      config: {
        operationId,
        securitySchemes,
        requiredScopes: scopeRequirementsOf(spec, operation),
        ...(deprecation ? { deprecationHeaders: deprecation } : {}),
        compiledPath: compilePath({ url, operationId, securitySchemes, deprecationHeaders: deprecation }),
      },
      // A route's onRequest runs after the app's (admission), before parsing and validation.
      ...(onRequest.length > 0 ? { onRequest } : {}),
      ...(preValidation.length > 0 ? { preValidation } : {}),
      // The size the spec declares for this operation's body; else the server's.
      ...(bodyLimit === undefined ? {} : { bodyLimit }),
    };
    // The glue's typings ask for a whole RouteOptions although it supplies
    // method, url and schema itself: the one cast at this boundary.
    return parts as RouteOptions;
  };
}

/**
 * Registers the API's routes on a scope: method, url and schemas from the
 * route table `npm run generate` computed with fastify-openapi-glue (see
 * routeTable.ts), everything else from the resolver. Doing the glue's work at
 * build time saves every start its spec validation and $ref resolution.
 */
export function registerOperations(
  api: FastifyInstance,
  routes: readonly RouteEntry[],
  resolve: (route: RouteEntry) => RouteOptions,
): void {
  for (const route of routes) {
    api.route({ ...resolve(route), method: route.method, url: route.url, schema: route.schema });
  }
}
