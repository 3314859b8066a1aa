import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';
import { destination, symbols, type Logger } from 'pino';
import type { Config } from '../config/load.js';
import { logTimestamp, type LineFormat, type LineSink } from './requestLine.js';

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

/**
 * Whether a person reads the log: stdout is a terminal (npm run dev, npm
 * start in a shell), not a pipe or file a collector reads. pino-pretty is a
 * dev dependency, so a terminal without it (docker run -t on the production
 * image) still gets JSON lines.
 */
export function stdoutIsTerminal(stdout: { isTTY?: boolean } = process.stdout): boolean {
  if (stdout.isTTY !== true) return false;
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

/** Whether loggerOptions writes to the buffered stdout (not a given stream, not pino-pretty). */
export function writesToBufferedStdout(stream?: LogStream, terminal: boolean = stdoutIsTerminal()): boolean {
  return stream === undefined && !terminal;
}

/** The pino options of the service: JSON lines, or pino-pretty when a person reads stdout (stdoutIsTerminal). */
export function loggerOptions(
  config: Pick<Config, 'LOG_LEVEL'>,
  stream?: LogStream,
  terminal: boolean = stdoutIsTerminal(),
): Exclude<FastifyServerOptions['logger'], boolean | undefined> {
  const base = {
    level: config.LOG_LEVEL,
    redact: { paths: redactedPaths, censor: '[redacted]' },
    timestamp: logTimestamp,
  };
  if (stream) return { ...base, stream };
  if (terminal) {
    return {
      ...base,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
    };
  }
  return { ...base, stream: bufferedStdout() };
}

/** Lines are written to stdout once this many bytes are waiting (about 12 request lines)... */
const logBufferBytes = 4096;
/** ...or this long after the first of them, whichever comes first. */
const logFlushIntervalMs = 250;

/** What pino writes to: one line per call. */
interface LineBuffer extends LineSink {
  write(line: string): boolean;
  flushSync(): void;
}
let stdout: LineBuffer | undefined;

/**
 * stdout, written in batches: one write system call per ~12 request lines
 * instead of one per line (pino's default). Lines wait in an array and are
 * joined once per batch; sonic-boom (pino.destination) then writes the
 * batch synchronously, retrying when stdout is a full pipe. (sonic-boom's
 * own minLength batching measures the byte length of its whole pending
 * string on every line: 1.07 against 0.37 µs per line in a loop, and far
 * more under load, where each line flattened and copied the batch so far.)
 * The batch is written out on every exit Node runs its exit handlers for
 * (shutdown, process.exit, an uncaught exception). A SIGKILL or an
 * out-of-memory kill loses what waits: at most logBufferBytes, and at most
 * logFlushIntervalMs of lines. One per process, shared by every logger in it.
 */
export function bufferedStdout(): LineBuffer {
  if (stdout) return stdout;
  const target = destination({ dest: 1, sync: true });
  const lines: string[] = [];
  let waitingBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const flushSync = () => {
    clearTimeout(timer);
    timer = undefined;
    if (lines.length === 0) return;
    const batch = lines.join('');
    lines.length = 0;
    waitingBytes = 0;
    target.write(batch);
  };
  const buffer: LineBuffer = {
    write(line) {
      lines.push(line);
      waitingBytes += line.length;
      if (waitingBytes >= logBufferBytes) flushSync();
      else timer ??= setTimeout(flushSync, logFlushIntervalMs).unref();
      return true;
    },
    flushSync,
  };
  process.on('exit', () => {
    try {
      flushSync();
      target.flushSync();
    } catch {
      // stdout is closed (its reader went away): the lines have nowhere to go.
    }
  });
  stdout = buffer;
  return buffer;
}

/** What requestLines needs to format a line as this logger would (its root bindings, its number for info). */
export function lineFormatOf(logger: unknown): LineFormat | undefined {
  const pinoLogger = logger as Partial<Logger> & Record<symbol, unknown>;
  const rootBindings = pinoLogger[symbols.chindingsSym];
  const infoLevel = pinoLogger.levels?.values['info'];
  // Only pino's own numeric levels and bindings: anything else goes through pino.
  if (typeof rootBindings !== 'string' || typeof infoLevel !== 'number') return undefined;
  if (pinoLogger[symbols.formattersSym] !== undefined && hasLevelFormatter(pinoLogger[symbols.formattersSym]))
    return undefined;
  return { rootBindings, infoLevel };
}

function hasLevelFormatter(formatters: unknown): boolean {
  const level = (formatters as { level?: (label: string, number: number) => object }).level;
  if (typeof level !== 'function') return false;
  // pino's default level formatter writes { level: number }.
  const written = level('info', 30) as Record<string, unknown>;
  return !(Object.keys(written).length === 1 && written['level'] === 30);
}
