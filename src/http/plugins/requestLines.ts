import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { routeOf } from '../pipeline.js';
import { pathWithoutQuery } from '../requestPath.js';

/** The request a line is about, taken when its response is sent. */
interface Completed {
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
 * pino's `timestamp` option: pino's own epoch time, except while a batch is
 * written, when each line carries the time its request completed.
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

const openBatches = new Set<() => void>();
let exitHandled = false;

function flushEveryBatchAtExit(): void {
  if (exitHandled) return;
  exitHandled = true;
  // Prepended: before the buffered stdout writes itself out at exit (logging.ts).
  process.prependListener('exit', () => {
    for (const flush of openBatches) flush();
  });
}

export interface RequestLines {
  /** The onResponse step that logs the request. */
  record: (request: FastifyRequest, reply: FastifyReply) => void;
  /** Writes what waits; the app calls it when it closes. */
  close: () => void;
}

/**
 * Request lines written at once (tests, development), or taken on the
 * request path and formatted in batches: once `capacity` wait, or
 * `maxWaitMs` after the first. Under load pino's formatting costs 7-15 µs of
 * CPU per line, where the caches are cold between two requests, and about
 * 2 µs in a loop over a batch (npm run bench:hooks). The lines go to the
 * buffered stdout, which holds them up to 250 ms anyway; each keeps the time
 * its request completed. They are written at exit and when the app closes.
 */
export function requestLines(batched: boolean, capacity = 64, maxWaitMs = 100): RequestLines {
  if (!batched) {
    return {
      record: (request, reply) => {
        write(completed(request, reply));
      },
      close: () => undefined,
    };
  }
  const waiting: Completed[] = [];
  let timer: NodeJS.Timeout | undefined;
  function flush(): void {
    clearTimeout(timer);
    timer = undefined;
    for (let index = 0; index < waiting.length; index++) {
      try {
        write(waiting[index] as Completed);
      } catch {
        // stdout is gone: the line has nowhere to go, and a timer must not throw.
      }
    }
    waiting.length = 0;
  }
  flushEveryBatchAtExit();
  openBatches.add(flush);
  return {
    record: (request, reply) => {
      if (levelsAboveInfo.has(request.log.level)) return;
      waiting.push(completed(request, reply));
      if (waiting.length >= capacity) flush();
      else timer ??= setTimeout(flush, maxWaitMs).unref();
    },
    close: () => {
      flush();
      openBatches.delete(flush);
    },
  };
}
