import type { FastifyInstance } from 'fastify';
import { bufferedStdout, lineFormatOf } from '../../observability/logging.js';
import type { ServiceMetrics } from '../../observability/metrics.js';
import { afterResponse, type AfterStep } from '../pipeline.js';
import { requestLines } from './requestLines.js';
import { requestMetricsStep } from './requestMetrics.js';

/**
 * After each response, as one onResponse hook: its log line, its duration
 * metric and what earlier stages record once the answer is sent (`others`).
 * Where the lines go to the buffered stdout (formatLinesHere), they are
 * formatted without pino (see requestLines).
 */
export function observeResponses(
  app: FastifyInstance,
  metrics: ServiceMetrics,
  formatLinesHere: boolean,
  others: AfterStep[] = [],
): void {
  const lines = formatLinesHere ? requestLines(bufferedStdout(), lineFormatOf(app.log)) : requestLines();
  const recordDuration = requestMetricsStep(metrics);
  const afterSteps: AfterStep[] = [lines.record, ...(recordDuration ? [recordDuration] : []), ...others];
  app.addHook('onResponse', afterResponse(...afterSteps));
}
