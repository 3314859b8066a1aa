import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/**
 * One step of an onRequest pipeline. It returns nothing to let the request
 * go on, throws (an ApiError) to answer it, or returns a promise when it has
 * to wait (a key lookup, a count in Redis).
 */
export type Step = (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

function runFrom(
  steps: readonly Step[],
  first: number,
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  for (let index = first; index < steps.length; index++) {
    const step = steps[index] as Step;
    let pending: void | Promise<void>;
    try {
      pending = step(request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (pending !== undefined) {
      pending.then(() => {
        runFrom(steps, index + 1, request, reply, done);
      }, done);
      return;
    }
  }
  done();
}

/**
 * What is fixed about an operation's route when it is registered: each stage
 * compiles its steps for it (arrival.stepsFor, admission.stepsFor), binding
 * these facts and dropping the checks they settle, once at start-up.
 */
export interface OperationRoute {
  url: string;
  operationId: string;
  /** Security schemes the operation requires, from openapi.yaml; empty for public routes. */
  securitySchemes: readonly string[];
  /** The operation's Deprecation, Sunset and Link headers (openapi.yaml's x-deprecated-at...). */
  deprecationHeaders: Record<string, string> | undefined;
}

/** Which stretch of the onRequest path a hook runs: all of it, or the halves CORS sits between. */
export type PathPart = 'whole' | 'arrival' | 'admission';

/** An operation's onRequest steps, compiled for its route: one list per stretch of the path. */
export type CompiledPath = Readonly<Record<PathPart, readonly Step[]>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation's compiled onRequest steps (operations/glue.ts); absent on other routes. */
    compiledPath?: CompiledPath;
    /** A probe (/healthz, /readyz): its 503 says "not ready", not an API error (pets_server_errors_total leaves it out). */
    probe?: boolean;
  }
}

/**
 * One onRequest hook for a stretch of the path: an operation's route runs the
 * steps compiled for it (its constants bound, the checks it cannot fail
 * left out); any other request (unrouted, probes, docs) runs `general`, which
 * looks at the route on every request. fastify pays a hook call, a `next`
 * and a reply check per hook; most steps are synchronous checks of a
 * microsecond or less, so one hook for several costs less than one hook each.
 * A step that waits costs one promise, the others none.
 */
export function routedPipeline(part: PathPart, general: readonly Step[]) {
  return function runRoutedPipeline(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    runFrom(routeOf(request).config.compiledPath?.[part] ?? general, 0, request, reply, done);
  };
}

/** A step after the response is sent (log line, metrics): synchronous, never an answer. */
export type AfterStep = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * Steps run in order as one onResponse hook. Each runs even when one before
 * it throws; the failure is logged, as fastify logs a failing onResponse hook.
 */
export function afterResponse(...steps: AfterStep[]) {
  return function runAfterResponse(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    for (const step of steps) {
      try {
        step(request, reply);
      } catch (error) {
        request.log.error({ err: error }, 'an onResponse step failed');
      }
    }
    done();
  };
}

type RouteFacts = FastifyRequest['routeOptions'];

declare module 'fastify' {
  interface FastifyRequest {
    /** request.routeOptions, kept on first use (routeOf). */
    routeFacts: RouteFacts | undefined;
  }
}

/**
 * The matched route's options (template, config). fastify builds a new object of
 * twelve fields on every read of request.routeOptions; several hooks read it
 * per request, so the first read is kept.
 */
export function routeOf(request: FastifyRequest): RouteFacts {
  return (request.routeFacts ??= request.routeOptions);
}

/** Declares routeFacts on every request (routeOf fills it). */
export function decorateRouteFacts(app: FastifyInstance): void {
  app.decorateRequest('routeFacts', undefined);
}
