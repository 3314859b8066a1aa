import type { FastifyBaseLogger } from 'fastify';
import { pathWithoutQuery } from './requestPath.js';
import type { RequestLogger } from './requestLogger.js';

// The one log line per request: what it holds and how it is written, by
// pino or, where the lines go to the buffered stdout, by one template.

/** The request a line is about, taken when its response is sent. */
export interface Completed {
  log: FastifyBaseLogger;
  time: number;
  method: string;
  route: string | null;
  url: string;
  status: number;
  durationMs: number;
}

let lineTime: number | undefined;

/**
 * pino's `timestamp` option: pino's own epoch time, except while a request
 * line is written, which carries the time its request completed.
 */
export function logTimestamp(): string {
  return `,"time":${lineTime ?? Date.now()}`;
}

/**
 * The one line per request, replacing fastify's two (incoming, completed),
 * with the route template so that lines group by operation. The path is
 * logged without its query string (pathWithoutQuery), as traces record it.
 */
export function writeLine(line: Completed): void {
  lineTime = line.time;
  try {
    line.log.info(
      {
        method: line.method,
        route: line.route,
        path: pathWithoutQuery(line.url),
        status: line.status,
        durationMs: line.durationMs,
      },
      'request completed',
    );
  } finally {
    lineTime = undefined;
  }
}

/** Where `info` lines are not written: nothing is recorded for them. */
export const levelsAboveInfo: ReadonlySet<string> = new Set(['warn', 'error', 'fatal', 'silent']);

/** Where formatted lines go: the buffered stdout of logging.ts. */
export interface LineSink {
  write(line: string): boolean;
}

/** What the line of a request needs from the logger it was made from: pino's level number and bindings. */
export interface LineFormat {
  /** pino's number for `info`. */
  infoLevel: number;
  /** The root logger's bindings as pino writes them (`,"pid":1,"hostname":"h"`). */
  rootBindings: string;
}

/**
 * The request line pino would write through the request's child logger,
 * formatted here as one template: the same keys in the same order, the
 * same values (test/http/requestLines.test.ts compares the two). Strings from
 * the client go through JSON.stringify as pino's do; the route and method
 * are the route's own. Its parts come as arguments, not as an object: one
 * allocation less per request.
 */
export function formatLine(
  format: LineFormat,
  log: RequestLogger,
  time: number,
  method: string,
  route: string | null,
  url: string,
  status: number,
  durationMs: number,
): string {
  let bound = '';
  for (const key in log.bindings) bound += `,${JSON.stringify(key)}:${JSON.stringify(log.bindings[key])}`;
  return (
    `{"level":${format.infoLevel},"time":${time}${format.rootBindings}${bound}` +
    `,"method":${JSON.stringify(method)},"route":${route === null ? 'null' : JSON.stringify(route)}` +
    `,"path":${JSON.stringify(pathWithoutQuery(url))},"status":${status},"durationMs":${durationMs}` +
    ',"msg":"request completed"}\n'
  );
}
