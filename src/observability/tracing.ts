import { createRequire } from 'node:module';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { FastifyRequest } from 'fastify';
import type { Database, Queryable } from '../db/index.js';
import { pathWithoutQuery } from '../http/requestPath.js';
import type { Tracing } from './tracingSwitch.js';

// Loaded only through startTracingIfRequested (tracingSwitch.ts): importing
// this module loads the whole SDK.

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
  return {
    ...db,
    ...traced(db),
    transaction: (work) => db.transaction((tx) => work(traced(tx))),
  };
}

let started: Tracing | undefined;

/**
 * Starts the OpenTelemetry SDK for traces only (metrics are Prometheus's,
 * logs are stdout's), configured by the standard OTEL_* variables: exporter,
 * endpoint, protocol (http/protobuf, http/json, grpc), sampler, resource.
 */
export function startTracing(): Tracing {
  // The SDK is global to the process: a second server in one process (tests) shares it.
  started ??= startSdk();
  return started;
}

function startSdk(): Tracing {
  const fastify = new FastifyOtelInstrumentation({
    // One span per request and one for its handler; not one per hook.
    instrumentHooks: false,
    requestHook: onRequestSpan,
  });
  const namedByEnv =
    Boolean(process.env['OTEL_SERVICE_NAME']) ||
    /(^|,)\s*service\.name=/.test(process.env['OTEL_RESOURCE_ATTRIBUTES'] ?? '');
  const sdk = new NodeSDK({
    ...(namedByEnv ? {} : { serviceName }),
    instrumentations: [fastify, new PgInstrumentation(), new IORedisInstrumentation()],
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
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
    flush: async () => {
      // The provider the SDK registered; the API hands it out behind a proxy.
      const provider = trace.getTracerProvider() as { getDelegate?: () => { forceFlush?: () => Promise<void> } };
      await provider.getDelegate?.().forceFlush?.();
    },
  };
}
