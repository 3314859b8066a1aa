import { randomUUID } from 'node:crypto';
import responseValidation from '@fastify/response-validation';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import { authenticate, createKeyChecker, requireAuthentication } from './auth/authenticate.js';
import type { Config } from './config.js';
import { apiPrefix, loadSpecification, type OpenApiDocument } from './contract.js';
import type { Database } from './db/index.js';
import { ApiError } from './errors.js';
import { buildHandlers } from './handlers/index.js';
import { createAjv } from './http/ajv.js';
import { parseOrigins, registerCors } from './http/cors.js';
import { registerDocs } from './http/docs.js';
import { errorHandler } from './http/errorHandler.js';
import { operationResolver } from './http/glue.js';
import { registerHealthRoutes } from './http/health.js';
import { loggerOptions, logRequest, type LogStream } from './http/logging.js';
import { notFoundHandler } from './http/notFound.js';
import { rateLimiter } from './http/rateLimit.js';
import { validatorCompiler } from './http/validation.js';

export type AppConfig = Pick<
  Config,
  | 'BODY_LIMIT_BYTES'
  | 'API_KEY_CACHE_SECONDS'
  | 'RESPONSE_VALIDATION'
  | 'LOG_LEVEL'
  | 'NODE_ENV'
  | 'REQUEST_TIMEOUT_MS'
  | 'HEADERS_TIMEOUT_MS'
  | 'KEEP_ALIVE_TIMEOUT_MS'
  | 'CONNECTION_TIMEOUT_MS'
  | 'CORS_ORIGINS'
  | 'TRUST_PROXY'
  | 'RATE_LIMIT_MAX'
  | 'RATE_LIMIT_WINDOW_SECONDS'
  | 'REDIS_URL'
>;

export interface AppDeps {
  db: Database;
  /** Overrides the logger built from LOG_LEVEL (false silences it). */
  logger?: FastifyServerOptions['logger'];
  /** Keeps the service's logger but writes its lines here instead of stdout. */
  logStream?: LogStream;
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

function assertBearerOnly(spec: OpenApiDocument): void {
  for (const [name, scheme] of Object.entries(spec.components.securitySchemes)) {
    if (scheme.type !== 'http' || scheme.scheme?.toLowerCase() !== 'bearer') {
      throw new Error(`Security scheme ${name} is not HTTP bearer; the auth hook only implements bearer keys`);
    }
  }
}

function trustProxy(setting: string): boolean | string | ((address: string, hop: number) => boolean) {
  if (setting === 'true' || setting === 'false') return setting === 'true';
  if (!/^[0-9]+$/.test(setting)) return setting;
  const hops = Number(setting);
  return (_address, hop) => hop < hops;
}

/** The whole HTTP service, ready for inject() or listen(); it never listens by itself. */
export async function buildApp(config: AppConfig, deps: AppDeps): Promise<FastifyInstance> {
  const spec = loadSpecification();
  assertBearerOnly(spec);
  const app = Fastify({
    logger: deps.logger ?? loggerOptions(config, deps.logStream),
    // One line per request comes from logRequest instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: config.CONNECTION_TIMEOUT_MS,
    trustProxy: trustProxy(config.TRUST_PROXY),
    // During shutdown the draining hook answers with the Error object instead.
    return503OnClosing: false,
    exposeHeadRoutes: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
    },
  });
  // Node's own default is 60 s whatever requestTimeout says; fastify has no option for it.
  app.server.headersTimeout = config.HEADERS_TIMEOUT_MS;

  // Only JSON bodies are part of the contract; without this, text/plain
  // bodies would be parsed and reach routes whose schemas only cover JSON.
  app.removeContentTypeParser(['text/plain']);
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler(config.BODY_LIMIT_BYTES));
  app.setNotFoundHandler(notFoundHandler(spec));

  // The order of the onRequest hooks is the request pipeline: refuse new work
  // while draining, answer CORS preflights (they carry no key), identify the
  // caller, count the request against its key or address, then refuse it if
  // unauthenticated - after counting, so that guessing keys hits the limit.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onRequest', (_request, _reply, done) => {
    done(draining ? new ApiError(503, 'service_unavailable', 'The service is shutting down; retry the request.', { 'retry-after': '1' }) : undefined);
  });
  await registerCors(app, spec, parseOrigins(config.CORS_ORIGINS));
  app.decorateRequest('apiKeyId', undefined);
  app.decorateRequest('apiKeyHash', undefined);
  app.decorateRequest('authFailure', undefined);
  // Set on arrival rather than in onSend: error replies keep headers already
  // set, and a synchronous onRequest hook is cheaper than an async onSend one.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onRequest', authenticate(createKeyChecker({ db: deps.db, cacheSeconds: config.API_KEY_CACHE_SECONDS })));
  app.addHook('onRequest', await rateLimiter(app, config));
  app.addHook('onRequest', requireAuthentication);
  app.addHook('onSend', (_request, reply, payload, done) => {
    // A keep-alive connection would otherwise stay open, idle, until
    // KEEP_ALIVE_TIMEOUT_MS and hold the shutdown up that long.
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onResponse', logRequest);

  registerHealthRoutes(app, deps.db, () => draining);
  await registerDocs(app);
  if (config.RESPONSE_VALIDATION) {
    // Registered before the glue so its onRoute hook sees every API route.
    await app.register(responseValidation, {
      ajv: createAjv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: true }),
    });
  }
  await app.register(openapiGlue, {
    specification: spec,
    prefix: apiPrefix,
    operationResolver: operationResolver(spec, buildHandlers({ db: deps.db })),
  });
  return app;
}
