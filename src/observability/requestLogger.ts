import type { FastifyBaseLogger } from 'fastify';

type Bindings = Record<string, unknown>;
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type LogArguments = Parameters<FastifyBaseLogger['info']>;

/**
 * A request's logger (fastify's childLoggerFactory) that makes its pino
 * child only when something logs through it. fastify makes a child per
 * request (pino copies its bindings, serializes them and builds a new
 * object), while most requests log nothing but their one line, which
 * requestLines formats itself from the same bindings. A request that logs
 * (an error, a warning) gets the child pino would have made, on first use.
 */
export class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    /** The bindings pino's child would carry: fastify's `{ requestId }`. */
    readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  /** The pino child, made on first use. */
  private get child_(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.made?.level ?? this.options?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.child_.level = level;
  }

  fatal(...args: LogArguments): void {
    this.child_.fatal(...args);
  }
  error(...args: LogArguments): void {
    this.child_.error(...args);
  }
  warn(...args: LogArguments): void {
    this.child_.warn(...args);
  }
  info(...args: LogArguments): void {
    this.child_.info(...args);
  }
  debug(...args: LogArguments): void {
    this.child_.debug(...args);
  }
  trace(...args: LogArguments): void {
    this.child_.trace(...args);
  }
  silent(...args: LogArguments): void {
    this.child_.silent(...args);
  }
  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.child_.child(bindings, options);
  }
}

/** fastify's childLoggerFactory option: a RequestLogger instead of a pino child per request. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildOptions): RequestLogger {
  return new RequestLogger(logger, bindings, options);
}
