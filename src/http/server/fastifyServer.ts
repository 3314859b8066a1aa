import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { trustProxy } from '../../config/trustProxy.js';
import { lazyChildLogger } from '../../observability/requestLogger.js';
import { requestIdOf } from '../arrival/requestId.js';
import { frameworkErrorHandler } from '../errors/frameworkErrors.js';
import type { HttpLimits } from '../limits.js';
import type { DeferredCompilation } from '../operations/deferredCompile.js';
import { registerStrictJsonParser } from '../operations/jsonBody.js';
import { registerBytesParser } from '../operations/bytesBody.js';
import { validatingSerializers } from '../operations/serialization.js';
import { decorateRouteFacts } from '../pipeline.js';
import { guardConnections } from './connections.js';
import { nodeServerOptions } from './nodeServerOptions.js';
import { clientErrorHandlerWith, timeConnections, type CutRequest } from './parserErrors.js';
import { answerAfterTheBody } from './unreadBodies.js';

export interface ServerSettings {
  logger: Exclude<FastifyServerOptions['logger'], undefined>;
  keepAliveTimeoutMs: number;
  /** TRUST_PROXY as configured (config/trustProxy.ts parses it). */
  trustProxy: string;
  limits: HttpLimits;
  deferred: DeferredCompilation;
  /** Counts a request Node's parser cut (408, 431, 400) in the request metrics. */
  observeCut: (cut: CutRequest) => void;
  /** Counts a request its client closed or reset the connection in the middle of (nothing answered). */
  observeAbandoned: () => void;
}

/**
 * The fastify instance with Node's server guarded: its limits, the Error
 * object for what Node's parser and fastify's router refuse before any hook
 * runs, request ids, one log line per request, strict JSON bodies, and
 * answers that wait for the body they refuse (unreadBodies.ts).
 */
export function createServer(settings: ServerSettings): FastifyInstance {
  const { limits } = settings;
  const app = Fastify({
    logger: settings.logger,
    // One line per request comes from requestLines instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // A request's pino child is made only if something logs through it.
    childLoggerFactory: lazyChildLogger,
    bodyLimit: limits.bodyLimitBytes,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: settings.keepAliveTimeoutMs,
    connectionTimeout: limits.connectionTimeoutMs,
    trustProxy: trustProxy(settings.trustProxy),
    // During shutdown the draining hook answers with the Error object instead.
    return503OnClosing: false,
    exposeHeadRoutes: false,
    genReqId: requestIdOf,
    http: nodeServerOptions(limits.headersTimeoutMs),
    clientErrorHandler: clientErrorHandlerWith({ cut: settings.observeCut, abandoned: settings.observeAbandoned }),
    frameworkErrors: frameworkErrorHandler,
    schemaController: { compilersFactory: { buildSerializer: validatingSerializers(settings.deferred) } },
  });
  // Only the media types of src/openapi/mediaTypes.ts are read; without this, text/plain
  // bodies would be parsed and reach routes whose schemas do not cover them.
  app.removeContentTypeParser(['text/plain']);
  registerStrictJsonParser(app);
  registerBytesParser(app);
  answerAfterTheBody(app, limits.unreadBody);
  decorateRouteFacts(app);
  guardConnections(app.server, app.log);
  timeConnections(app.server);
  return app;
}
