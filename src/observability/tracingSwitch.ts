import { ConfigError } from '../config/load.js';
import type { OtlpProtocol, PropagatorName, TraceExporterName, TraceExportSettings, Tracing } from './tracingTypes.js';

export type { OtlpProtocol, PropagatorName, TraceExporterName, TraceExportSettings, Tracing } from './tracingTypes.js';

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

const exporterNames: readonly string[] = ['otlp', 'console'] satisfies TraceExporterName[];
const protocols: readonly string[] = ['http/protobuf', 'http/json'] satisfies OtlpProtocol[];
const propagatorNames: readonly string[] = ['tracecontext', 'baggage'] satisfies PropagatorName[];

function listFrom(env: NodeJS.ProcessEnv, name: string): string[] | undefined {
  const list = (env[name] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  return list.length > 0 ? list : undefined;
}

function unsupported(name: string, value: string, supported: readonly string[], hint = ''): ConfigError {
  return new ConfigError(`${name}=${value} is not supported here: use ${supported.join(', ')}${hint}.`);
}

function protocolFrom(env: NodeJS.ProcessEnv): OtlpProtocol {
  const name = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']?.trim()
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = env[name]?.trim() || 'http/protobuf';
  if (protocols.includes(value)) return value as OtlpProtocol;
  const hint = value === 'grpc' ? " (a collector's OTLP/HTTP port, 4318 by default, rather than gRPC's 4317)" : '';
  throw unsupported(name, value, protocols, hint);
}

/**
 * Reads the exporter, protocol and propagators asked for, refusing (a
 * ConfigError naming the variable) what this service does not ship: an
 * operator who asked for gRPC or Zipkin learns it at start, not from a
 * collector that never receives a span.
 */
export function traceExportSettings(env: NodeJS.ProcessEnv): TraceExportSettings {
  const exporters = (listFrom(env, 'OTEL_TRACES_EXPORTER') ?? ['otlp']).filter((name) => name !== 'none');
  for (const name of exporters)
    if (!exporterNames.includes(name)) throw unsupported('OTEL_TRACES_EXPORTER', name, [...exporterNames, 'none']);
  const propagators = listFrom(env, 'OTEL_PROPAGATORS') ?? ['tracecontext', 'baggage'];
  for (const name of propagators)
    if (name !== 'none' && !propagatorNames.includes(name))
      throw unsupported('OTEL_PROPAGATORS', name, [...propagatorNames, 'none']);
  return {
    exporters: [...new Set(exporters)] as TraceExporterName[],
    protocol: exporters.includes('otlp') ? protocolFrom(env) : 'http/protobuf',
    propagators: propagators.includes('none') ? [] : ([...new Set(propagators)] as PropagatorName[]),
  };
}

/**
 * Starts the SDK (loading OpenTelemetry only now) when the environment asks
 * for traces; a ConfigError when it asks for something this service does not ship.
 */
export async function startTracingIfRequested(env: NodeJS.ProcessEnv): Promise<Tracing | undefined> {
  if (!tracingRequested(env)) return undefined;
  const settings = traceExportSettings(env);
  const { startTracing } = await import('./tracing.js');
  return startTracing(settings);
}
