import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  levelsAboveInfo,
  formatLine,
  writeLine,
  type Completed,
  type LineFormat,
  type LineSink,
} from '../../observability/requestLine.js';
import { RequestLogger } from '../../observability/requestLogger.js';
import { routeOf } from '../pipeline.js';

function durationMsOf(reply: FastifyReply): number {
  return Math.round(reply.elapsedTime * 100) / 100;
}

function completed(request: FastifyRequest, reply: FastifyReply): Completed {
  return {
    log: request.log,
    time: Date.now(),
    method: request.method,
    route: routeOf(request).url ?? null,
    url: request.url,
    status: reply.statusCode,
    durationMs: durationMsOf(reply),
  };
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
        writeLine(completed(request, reply));
      },
    };
  }
  return {
    record: (request, reply) => {
      const log = request.log;
      if (!(log instanceof RequestLogger)) {
        writeLine(completed(request, reply));
        return;
      }
      if (levelsAboveInfo.has(log.level)) return;
      const route = routeOf(request).url ?? null;
      const { method, url } = request;
      sink.write(formatLine(format, log, Date.now(), method, route, url, reply.statusCode, durationMsOf(reply)));
    },
  };
}
