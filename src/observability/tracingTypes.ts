// Types only: what tracing.ts (loaded on demand) and tracingSwitch.ts (always
// loaded) share, so that neither imports the other's values.
import type { FastifyPluginCallback } from 'fastify';
import type { Database } from '../db/index.js';

export type TraceExporterName = 'otlp' | 'console';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export type PropagatorName = 'tracecontext' | 'baggage';

/** What the OTEL_* variables select among what this service ships; the SDK reads the rest itself. */
export interface TraceExportSettings {
  exporters: TraceExporterName[];
  protocol: OtlpProtocol;
  /** Empty: OTEL_PROPAGATORS=none, no propagator is registered. */
  propagators: PropagatorName[];
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
