import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { routeOf } from '../pipeline.js';
import { pathWithoutQuery } from '../../observability/requestPath.js';
import { RequestLogger } from '../../observability/requestLogger.js';

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

function completed(request: FastifyRequest, reply: FastifyReply): Completed {
  return {
    log: request.log,
    time: Date.now(),
    method: request.method,
    route: routeOf(request).url ?? null,
    url: request.url,
    status: reply.statusCode,
    durationMs: Math.round(reply.elapsedTime * 100) / 100,
  };
}

/**
 * The one line per request, replacing fastify's two (incoming, completed),
 * with the route template so that lines group by operation. The path is
 * logged without its query string (pathWithoutQuery), as traces record it.
 */
function write(line: Completed): void {
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
const levelsAboveInfo = new Set(['warn', 'error', 'fatal', 'silent']);

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
 * are the route's own.
 */
export function formatLine(format: LineFormat, log: RequestLogger, line: Omit<Completed, 'log'>): string {
  let bound = '';
  for (const key in log.bindings) bound += `,${JSON.stringify(key)}:${JSON.stringify(log.bindings[key])}`;
  return (
    `{"level":${format.infoLevel},"time":${line.time}${format.rootBindings}${bound}` +
    `,"method":${JSON.stringify(line.method)},"route":${line.route === null ? 'null' : JSON.stringify(line.route)}` +
    `,"path":${JSON.stringify(pathWithoutQuery(line.url))},"status":${line.status},"durationMs":${line.durationMs}` +
    ',"msg":"request completed"}\n'
  );
}

export interface RequestLines {
  /** The onResponse step that logs the request. */
  record: (request: FastifyRequest, reply: FastifyReply) => void;
}

/**
 * The request line, written at once. Given a sink (the buffered stdout, in
 * production), a request whose logger is still fastify's request logger
 * (a RequestLogger: no child of pino's was made for it) gets its line
 * formatted here and handed to the sink, without pino: pino's formatting of
 * one line cost 7-15 µs of CPU under load, a template a fraction of that.
 * A request whose logger was replaced (tracing adds the trace id) goes
 * through pino, as every line does without a sink (tests, pino-pretty).
 */
export function requestLines(sink?: LineSink, format?: LineFormat): RequestLines {
  if (!sink || !format) {
    return {
      record: (request, reply) => {
        write(completed(request, reply));
      },
    };
  }
  return {
    record: (request, reply) => {
      const log = request.log;
      if (!(log instanceof RequestLogger)) {
        write(completed(request, reply));
        return;
      }
      if (levelsAboveInfo.has(log.level)) return;
      sink.write(formatLine(format, log, completed(request, reply)));
    },
  };
}
