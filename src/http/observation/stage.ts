import type { FastifyInstance } from 'fastify';
import { bufferedStdout, lineFormatOf } from '../../observability/logging.js';
import type { ServiceMetrics } from '../../observability/metrics.js';
import { afterResponse, type AfterStep } from '../pipeline.js';
import { requestLines } from './requestLines.js';
import { requestMetricsStep } from './requestMetrics.js';

/**
 * After each response, as one onResponse hook: its log line and its duration
 * metric. Where the lines go to the buffered stdout (formatLinesHere), they
 * are formatted without pino (see requestLines).
 */
export function observeResponses(app: FastifyInstance, metrics: ServiceMetrics, formatLinesHere: boolean): void {
  const lines = formatLinesHere ? requestLines(bufferedStdout(), lineFormatOf(app.log)) : requestLines();
  const recordDuration = requestMetricsStep(metrics);
  const afterSteps: AfterStep[] = recordDuration ? [lines.record, recordDuration] : [lines.record];
  app.addHook('onResponse', afterResponse(...afterSteps));
}
