import { createRequire } from 'node:module';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import {
  context,
  diag,
  DiagConsoleLogger,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import {
  CompositePropagator,
  diagLogLevelFromString,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
  type Resource,
} from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import type { FastifyRequest } from 'fastify';
import type { Database, Queryable } from '../db/index.js';
import { pathWithoutQuery } from './requestPath.js';
import type { PropagatorName, TraceExporterName, TraceExportSettings, Tracing } from './tracingTypes.js';

// Loaded only through startTracingIfRequested (tracingSwitch.ts): importing
// this module loads the tracing SDK.

const serviceName = 'pet-store-service';

/**
 * Names the request span after its operationId, records the path without its
 * query as the log line does (@fastify/otel puts the whole target in
 * url.path), and puts the trace id on every log line of the request.
 */
function onRequestSpan(span: Span, request: FastifyRequest): void {
  span.setAttribute('url.path', pathWithoutQuery(request.url));
  const operationId = request.routeOptions.config.operationId;
  span.updateName(operationId ?? `${request.method} ${request.routeOptions.url ?? 'unknown route'}`);
  request.log = request.log.child({ traceId: span.spanContext().traceId });
}

function statementKeyword(sql: string): string {
  return /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
}

/**
 * Spans for the embedded database, shaped as instrumentation-pg's are for
 * PostgreSQL: one CLIENT span per statement, a child of the active span.
 */
function traceEmbedded(db: Database, tracer: Tracer): Database {
  function inSpan<T>(sql: string, run: () => Promise<T>): Promise<T> {
    const span = tracer.startSpan(`pg.query:${statementKeyword(sql)} embedded`, {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system.name': 'postgresql', 'db.namespace': 'embedded', 'db.query.text': sql },
    });
    return context.with(trace.setSpan(context.active(), span), run).then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  }
  const traced = (queryable: Queryable): Queryable => ({
    query: (statement, values) => inSpan(statement.text, () => queryable.query(statement, values)),
    execScript: (sql) => inSpan(sql, () => queryable.execScript(sql)),
  });
  // Inherits what it does not wrap (replica(), close(), ...), own or inherited:
  // the database it gets may itself be a wrapper (trackAvailability).
  return Object.assign(Object.create(db) as Database, traced(db), {
    transaction: <T>(work: (tx: Queryable) => Promise<T>) => db.transaction((tx) => work(traced(tx))),
  });
}

let started: Tracing | undefined;

/**
 * Starts OpenTelemetry for traces only (metrics are Prometheus's, logs are
 * stdout's). The settings choose the exporters, OTLP protocol and
 * propagators; the SDK's own packages read the rest of the standard OTEL_*
 * variables: endpoints, headers, timeout and compression (the OTLP
 * exporters), sampler and span limits (the tracer provider), OTEL_BSP_* (the
 * batch processor), OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME (the
 * environment's resource detector).
 */
export function startTracing(settings: TraceExportSettings): Tracing {
  // The SDK is global to the process: a second server in one process (tests) shares it.
  started ??= startSdk(settings);
  return started;
}

function spanProcessor(name: TraceExporterName, settings: TraceExportSettings): SpanProcessor {
  if (name === 'console') return new SimpleSpanProcessor(new ConsoleSpanExporter());
  const exporter = settings.protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtobufExporter();
  return new BatchSpanProcessor(exporter);
}

/** Null when none is asked for (OTEL_PROPAGATORS=none): the provider then registers none. */
function propagator(names: PropagatorName[]): TextMapPropagator | null {
  if (names.length === 0) return null;
  return new CompositePropagator({
    propagators: names.map((name) =>
      name === 'tracecontext' ? new W3CTraceContextPropagator() : new W3CBaggagePropagator(),
    ),
  });
}

/** The SDK's defaults, then what the host, the process and OTEL_* say; the service's name unless OTEL_* names it. */
function serviceResource(): Resource {
  const detected = defaultResource().merge(
    detectResources({ detectors: [envDetector, processDetector, hostDetector] }),
  );
  const namedByEnv =
    Boolean(process.env['OTEL_SERVICE_NAME']) ||
    /(^|,)\s*service\.name=/.test(process.env['OTEL_RESOURCE_ATTRIBUTES'] ?? '');
  return namedByEnv ? detected : detected.merge(resourceFromAttributes({ 'service.name': serviceName }));
}

function startSdk(settings: TraceExportSettings): Tracing {
  const logLevel = diagLogLevelFromString(process.env['OTEL_LOG_LEVEL']);
  if (logLevel !== undefined) diag.setLogger(new DiagConsoleLogger(), { logLevel });
  const fastify = new FastifyOtelInstrumentation({
    // One span per request and one for its handler; not one per hook.
    instrumentHooks: false,
    requestHook: onRequestSpan,
  });
  const provider = new NodeTracerProvider({
    resource: serviceResource(),
    spanProcessors: settings.exporters.map((name) => spanProcessor(name, settings)),
  });
  provider.register({ propagator: propagator(settings.propagators) });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [fastify, new PgInstrumentation(), new IORedisInstrumentation()],
  });
  // The instrumentations patch pg's and ioredis's classes when these are
  // required. The app imports them as ES modules, possibly before this ran;
  // requiring them here (the same module objects) applies the patches
  // whatever the import order.
  const require = createRequire(import.meta.url);
  require('pg');
  require('ioredis');
  const tracer = trace.getTracer(serviceName);
  return {
    httpPlugin: fastify.plugin(),
    traceDatabase: (db) => (db.kind === 'embedded' ? traceEmbedded(db, tracer) : db),
    flush: () => provider.forceFlush(),
  };
}
