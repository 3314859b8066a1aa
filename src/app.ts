import responseValidation from '@fastify/response-validation';
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyPluginCallback,
  type FastifyServerOptions,
} from 'fastify';
import { createKeyChecker } from './auth/keyChecker.js';
import type { Config } from './config/load.js';
import type { Database } from './db/index.js';
import { buildHandlers } from './handlers/index.js';
import { DeferredCompilation } from './http/operations/deferredCompile.js';
import { errorHandler } from './http/errors/errorHandler.js';
import { registerStrictJsonParser } from './http/operations/jsonBody.js';
import { operationResolver, registerOperations } from './http/operations/glue.js';
import { notFoundHandler, refuseUnrouted } from './http/operations/notFound.js';
import { responseValidationAjv } from './http/operations/responseAjv.js';
import { deferredSerializers } from './http/operations/serialization.js';
import { validatorCompiler } from './http/operations/validation.js';
import { identifyCaller, requireAuthentication, verifyKey } from './http/admission/authentication.js';
import {
  clientErrorHandler,
  frameworkErrorHandler,
  nodeServerOptions,
  requireHostHeader,
} from './http/server/clientErrors.js';
import { parseOrigins, registerCors } from './http/arrival/cors.js';
import { registerDocs } from './http/docs/docsPage.js';
import { refuseUnknownExpectation, registerContinue } from './http/arrival/expectHeader.js';
import { refuseRepeatedHeaders, singleValuedHeaders } from './http/arrival/repeatedHeaders.js';
import { registerDraining } from './http/arrival/draining.js';
import { readinessCheck, registerHealthRoutes } from './http/probes/health.js';
import { registerLoadShedding } from './http/arrival/loadShedding.js';
import { registerIdempotencyPurge } from './http/background/idempotencyPurge.js';
import {
  bufferedStdout,
  lineFormatOf,
  loggerOptions,
  writesToBufferedStdout,
  type LogStream,
} from './observability/logging.js';
import { lazyChildLogger } from './observability/requestLogger.js';
import { requestLines } from './http/observation/requestLines.js';
import { requestMetricsStep } from './http/observation/requestMetrics.js';
import { rateLimiter } from './http/admission/rateLimit.js';
import { echoRequestId, requestIdOf } from './http/arrival/requestId.js';
import { setSecurityHeaders } from './http/arrival/securityHeaders.js';
import { readinessOf, startupGate } from './http/arrival/startupGate.js';
import { trustProxy } from './config/trustProxy.js';
import { guardConnections } from './http/server/connections.js';
import { limitsWith, type HttpLimitOverrides, type HttpLimits } from './http/limits.js';
import { afterResponse, pipeline, type AfterStep, type Step } from './http/pipeline.js';
import { noMetrics, type ServiceMetrics } from './observability/metrics.js';
import { apiBasePath, loadOpenApiDocument, loadRouteTable, type OpenApiDocument } from './openapi/document.js';

export type AppConfig = Pick<
  Config,
  | 'API_KEY_CACHE_SECONDS'
  | 'LOG_LEVEL'
  | 'KEEP_ALIVE_TIMEOUT_MS'
  | 'CORS_ORIGINS'
  | 'TRUST_PROXY'
  | 'RATE_LIMIT_MAX'
  | 'RATE_LIMIT_WINDOW_SECONDS'
  | 'REDIS_URL'
  | 'IDEMPOTENCY_TTL_SECONDS'
>;

export interface AppDeps {
  db: Database;
  /** Overrides the logger built from LOG_LEVEL (false silences it). */
  logger?: FastifyServerOptions['logger'];
  /** Keeps the service's logger but writes its lines here instead of stdout. */
  logStream?: LogStream;
  /** Where the app records its metrics (src/observability/metrics.ts); none when absent. */
  metrics?: ServiceMetrics;
  /** The OpenTelemetry request spans (Tracing.httpPlugin), registered before anything else. */
  httpTracing?: FastifyPluginCallback;
  /**
   * Resolves once the database is migrated and checked (start-up). Until then
   * every route but /healthz answers 503 and no periodic database work runs.
   * Absent: the database is ready already.
   */
  databaseReady?: Promise<void>;
  /** Tests only: other values for the fixed limits of src/http/limits.ts. */
  limits?: HttpLimitOverrides;
  /** Tests only: the clock (ms since the epoch) an operation's sunset (x-sunset) is compared with. */
  now?: () => number;
}

function assertBearerOnly(spec: OpenApiDocument): void {
  for (const [name, scheme] of Object.entries(spec.components.securitySchemes)) {
    if (scheme.type !== 'http' || scheme.scheme?.toLowerCase() !== 'bearer') {
      throw new Error(`Security scheme ${name} is not HTTP bearer; the auth hook only implements bearer keys`);
    }
  }
}

function createFastify(
  config: AppConfig,
  deps: AppDeps,
  limits: HttpLimits,
  deferred: DeferredCompilation,
): FastifyInstance {
  const app = Fastify({
    logger: deps.logger ?? loggerOptions(config, deps.logStream),
    // One line per request comes from requestLines instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // A request's pino child is made only if something logs through it.
    childLoggerFactory: lazyChildLogger,
    bodyLimit: limits.bodyLimitBytes,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: limits.connectionTimeoutMs,
    trustProxy: trustProxy(config.TRUST_PROXY),
    // During shutdown the draining hook answers with the Error object instead.
    return503OnClosing: false,
    exposeHeadRoutes: false,
    genReqId: requestIdOf,
    http: nodeServerOptions(limits.headersTimeoutMs),
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    schemaController: { compilersFactory: { buildSerializer: deferredSerializers(deferred) } },
  });
  // Only JSON bodies are part of the contract; without this, text/plain
  // bodies would be parsed and reach routes whose schemas only cover JSON.
  app.removeContentTypeParser(['text/plain']);
  registerStrictJsonParser(app);
  return app;
}

/**
 * The first requests after listening (the readiness probe, the first
 * traffic) compile what they need on demand; the rest waits this long, so
 * that compiling it does not delay them on a one-core container. Long enough
 * for a probe's round trip, short enough that a schema ajv refuses is still
 * reported within a second of the start.
 */
const warmUpDelayMs = 500;

/** The whole HTTP service, ready for inject() or listen(); it never listens by itself. */
export async function buildApp(config: AppConfig, deps: AppDeps): Promise<FastifyInstance> {
  const spec = loadOpenApiDocument();
  assertBearerOnly(spec);
  // Validators and serializers are compiled on first use, the rest soon after listening.
  const deferred = new DeferredCompilation();
  const limits = limitsWith(deps.limits);
  const app = createFastify(config, deps, limits, deferred);
  guardConnections(app.server, app.log);
  const metrics = deps.metrics ?? noMetrics;
  if (deps.httpTracing) await app.register(deps.httpTracing);
  app.setValidatorCompiler(validatorCompiler(deferred));
  let stopWarmUp = (): void => undefined;
  app.addHook('onListen', (done) => {
    stopWarmUp = deferred.warmAll((error) => {
      app.log.error({ err: error }, 'a schema of openapi.yaml does not compile');
    }, warmUpDelayMs);
    done();
  });
  app.addHook('onClose', (_app, done) => {
    stopWarmUp();
    done();
  });
  const handleError = errorHandler(limits.bodyLimitBytes, metrics.serverError);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(notFoundHandler(spec));

  // The onRequest hooks, in order, are the request pipeline. On arrival:
  // name the request, set the headers every answer carries, refuse new work
  // once closing or before the database is ready, or when overloaded. Then
  // answer CORS preflights (they carry no key). Then
  // admission: accept a remembered key (no hashing, no query), count a key
  // not remembered against the address before it is hashed and looked up
  // (429 there costs no query), look it up, count the request against its
  // key or address, then refuse it if unauthenticated - after counting, so
  // that guessing keys hits the limit.
  app.decorateRequest('routeFacts', undefined);
  const drain = registerDraining(app);
  const onArrival: Step[] = [
    echoRequestId,
    setSecurityHeaders,
    requireHostHeader,
    refuseRepeatedHeaders(singleValuedHeaders(spec)),
    refuseUnknownExpectation,
    drain.onArrival,
  ];
  const isReady = readinessOf(deps.databaseReady);
  if (deps.databaseReady) onArrival.push(startupGate(isReady));
  const loadShedding = registerLoadShedding(app, limits.loadShedding, metrics.loadShed);
  onArrival.push(loadShedding.shed);
  app.addHook('onRequest', pipeline(...onArrival));
  await registerCors(app, spec, parseOrigins(config.CORS_ORIGINS));
  app.decorateRequest('apiKeyId', undefined);
  app.decorateRequest('apiKeyHash', undefined);
  app.decorateRequest('authFailure', undefined);
  app.decorateRequest('uncheckedKey', undefined);
  app.decorateRequest('uncheckedKeyWasGood', false);
  app.decorateRequest('addressCounted', false);
  const keys = createKeyChecker({ db: deps.db, cacheSeconds: config.API_KEY_CACHE_SECONDS });
  const limiter = await rateLimiter(app, config, limits.redisTimeoutMs, metrics.rateLimited);
  app.addHook(
    'onRequest',
    pipeline(
      identifyCaller(keys, metrics.authenticationFailed),
      limiter.countAddressBeforeLookUp,
      verifyKey(keys, metrics.authenticationFailed),
      limiter.limitRate,
      requireAuthentication,
      refuseUnrouted(spec),
    ),
  );
  // 100 Continue only for a request admitted above, before its body is read.
  registerContinue(app, limits.bodyLimitBytes);
  // Formatted without pino where the lines go to the buffered stdout (see requestLines).
  const lines =
    deps.logger === undefined && writesToBufferedStdout(deps.logStream)
      ? requestLines(bufferedStdout(), lineFormatOf(app.log))
      : requestLines();
  const recordDuration = requestMetricsStep(metrics);
  const afterSteps: AfterStep[] = recordDuration ? [lines.record, recordDuration] : [lines.record];
  app.addHook('onResponse', afterResponse(...afterSteps));

  const checkReadiness = readinessCheck(deps.db, drain, loadShedding.isOverloaded, limits.readinessMaxAgeMs);
  registerHealthRoutes(app, deps.db, checkReadiness);
  metrics.watchReadiness(() => (isReady() ? checkReadiness().then(() => true) : Promise.resolve(false)));
  metrics.watchPool(() => deps.db.poolStatus());
  registerIdempotencyPurge(app, deps.db, config.IDEMPOTENCY_TTL_SECONDS, deps.databaseReady);
  await registerDocs(app);
  // Always on: a response outside the contract becomes a logged 500 rather
  // than reaching a client, and the check costs no measurable throughput
  // (docs/performance.md).
  // Registered before the glue so its onRoute hook sees every API route.
  await app.register(responseValidation, {
    // The plugin's typings name ajv's default class; this is its 2020-12
    // sibling, which the plugin uses the same way.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
    ajv: responseValidationAjv(deferred, { coerceTypes: false, useDefaults: false, removeAdditional: false }),
  });
  await app.register(async (api) => {
    // The second layer of the error handler (see errorHandler).
    api.setErrorHandler(handleError);
    registerOperations(
      api,
      loadRouteTable(),
      operationResolver(
        spec,
        buildHandlers({
          db: deps.db,
          basePath: apiBasePath,
          idempotencyTtlSeconds: config.IDEMPOTENCY_TTL_SECONDS,
          onIdempotentReplay: metrics.idempotentReplay,
        }),
        deps.now,
      ),
    );
  });
  return app;
}
