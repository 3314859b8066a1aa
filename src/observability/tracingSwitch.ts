import type { FastifyPluginCallback } from 'fastify';
import type { Database } from '../db/index.js';

/**
 * Tracing is on only when an exporter is asked for with the standard
 * OpenTelemetry variables, so that without them no OpenTelemetry module is
 * even loaded (start-up time). OTEL_SDK_DISABLED=true wins.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  const exporters = env['OTEL_TRACES_EXPORTER']?.trim();
  if (exporters) return exporters.split(',').some((name) => name.trim() !== 'none');
  return Boolean(env['OTEL_EXPORTER_OTLP_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
}

/** The running OpenTelemetry SDK, as the server uses it. */
export interface Tracing {
  /** Opens a span per request, named by operationId; registered first by buildApp. */
  httpPlugin: FastifyPluginCallback;
  /** Adds spans around queries where no instrumentation sees them (the embedded database). */
  traceDatabase(db: Database): Database;
  /** Sends the spans still buffered (at shutdown). */
  flush(): Promise<void>;
}

/** Starts the SDK (loading OpenTelemetry only now) when the environment asks for traces. */
export async function startTracingIfRequested(env: NodeJS.ProcessEnv): Promise<Tracing | undefined> {
  if (!tracingRequested(env)) return undefined;
  const { startTracing } = await import('./tracing.js');
  return startTracing();
}
