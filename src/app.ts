import type { FastifyInstance, FastifyPluginCallback, FastifyServerOptions } from 'fastify';
import type { Config } from './config/load.js';
import type { Database } from './db/index.js';
import { buildHandlers } from './handlers/index.js';
import { admissionStage } from './http/admission/stage.js';
import { registerCors, parseOrigins } from './http/arrival/cors.js';
import { registerContinue } from './http/arrival/expectHeader.js';
import { shedReasons } from './http/arrival/loadShedding.js';
import { arrivalStage } from './http/arrival/stage.js';
import { registerIdempotencyPurge } from './http/background/idempotencyPurge.js';
import { registerDocs } from './http/docs/docsPage.js';
import { answerErrors } from './http/errors/stage.js';
import { limitsWith, type HttpLimitOverrides } from './http/limits.js';
import { cutRequestMetric } from './http/observation/requestMetrics.js';
import { observeResponses } from './http/observation/stage.js';
import { compileOnDemand } from './http/operations/compilation.js';
import { DeferredCompilation } from './http/operations/deferredCompile.js';
import { refuseUnrouted } from './http/operations/notFound.js';
import { operationsStage } from './http/operations/stage.js';
import { routedPipeline, type CompiledPath, type OperationRoute } from './http/pipeline.js';
import { probesStage } from './http/probes/stage.js';
import { createServer } from './http/server/fastifyServer.js';
import { loggerOptions, writesToBufferedStdout, type LogStream } from './observability/logging.js';
import { noMetrics, type ServiceMetrics } from './observability/metrics.js';
import { apiBasePath, loadOpenApiDocument, type OpenApiDocument } from './openapi/document.js';

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
  | 'LOAD_SHED_EVENT_LOOP_DELAY_MS'
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
  /** Compile every schema before listening, not soon after (a cluster worker listens only once ready). */
  compileBeforeListening?: boolean;
  /** Tests only: other values for the fixed limits of src/http/limits.ts. */
  limits?: HttpLimitOverrides;
  /** Tests only: the clock (ms since the epoch) an operation's sunset (x-sunset) and a key's expiry are compared with. */
  now?: () => number;
}

function assertBearerOnly(spec: OpenApiDocument): void {
  for (const [name, scheme] of Object.entries(spec.components.securitySchemes)) {
    if (scheme.type !== 'http' || scheme.scheme?.toLowerCase() !== 'bearer') {
      throw new Error(`Security scheme ${name} is not HTTP bearer; the auth hook only implements bearer keys`);
    }
  }
}

/**
 * The whole HTTP service, ready for inject() or listen(); it never listens by
 * itself. The stages in the order a request meets them; each registers its
 * own hooks and the request fields it fills.
 */
export async function buildApp(config: AppConfig, deps: AppDeps): Promise<FastifyInstance> {
  const spec = loadOpenApiDocument();
  assertBearerOnly(spec);
  const deferred = new DeferredCompilation();
  const limits = limitsWith({
    ...deps.limits,
    loadShedding: { maxEventLoopDelayMs: config.LOAD_SHED_EVENT_LOOP_DELAY_MS, ...deps.limits?.loadShedding },
  });
  const metrics = deps.metrics ?? noMetrics;
  const app = createServer({
    logger: deps.logger ?? loggerOptions(config, deps.logStream),
    keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
    trustProxy: config.TRUST_PROXY,
    limits,
    deferred,
    observeCut: cutRequestMetric(metrics),
    observeAbandoned: metrics.requestAbandoned,
  });
  if (deps.httpTracing) await app.register(deps.httpTracing);
  compileOnDemand(app, deferred, deps.compileBeforeListening);
  const handleError = answerErrors(app, spec, limits.bodyLimitBytes, metrics.serverError);

  const arrival = arrivalStage(app, spec, limits, deps.databaseReady, metrics.loadShed);
  for (const reason of shedReasons) metrics.declareLoadShed(reason);
  const origins = parseOrigins(config.CORS_ORIGINS);
  // CORS preflights carry no key: answered between arrival and admission, so
  // with CORS on, the path is two hooks around the plugin's; without, one.
  if (origins.length > 0) app.addHook('onRequest', routedPipeline('arrival', arrival.steps));
  await registerCors(app, spec, origins);
  const admission = await admissionStage(app, deps.db, config, limits.redisTimeoutMs, metrics, deps.now);
  // An unknown path or method is answered last, before any body is read.
  const admitted = [...admission.steps, refuseUnrouted(spec)];
  app.addHook(
    'onRequest',
    origins.length > 0
      ? routedPipeline('admission', admitted)
      : routedPipeline('whole', [...arrival.steps, ...admitted]),
  );
  // Each operation's route gets the same stages compiled for it (no 404 check: it is routed).
  const compilePath = (route: OperationRoute): CompiledPath => {
    const [arrived, admit] = [arrival.stepsFor(route), admission.stepsFor(route)];
    return { arrival: arrived, admission: admit, whole: [...arrived, ...admit] };
  };
  // 100 Continue only for a request admitted above, before its body is read.
  registerContinue(app, limits.bodyLimitBytes);
  // Formatted without pino where the lines go to the buffered stdout (see requestLines).
  observeResponses(
    app,
    metrics,
    deps.logger === undefined && writesToBufferedStdout(deps.logStream),
    admission.afterSteps,
  );

  const { drain, isReady, loadShedding } = arrival;
  const probeInputs = { db: deps.db, drain, isOverloaded: loadShedding.isOverloaded, isReady };
  probesStage(app, { ...probeInputs, readinessMaxAgeMs: limits.readinessMaxAgeMs }, metrics);
  registerIdempotencyPurge(app, deps.db, config.IDEMPOTENCY_TTL_SECONDS, deps.databaseReady);
  await registerDocs(app);
  const handlers = buildHandlers({
    db: deps.db,
    basePath: apiBasePath(),
    idempotencyTtlSeconds: config.IDEMPOTENCY_TTL_SECONDS,
    onIdempotentReplay: metrics.idempotentReplay,
  });
  await operationsStage(app, { spec, handlers, deferred, handleError, compilePath, now: deps.now });
  return app;
}
