/**
 * Compilation put off from start-up to first use: a start compiles nothing
 * it does not need for its first request, which took most of the cold start
 * (ajv and fast-json-stringify: about 350 ms of 950). Whatever is still
 * pending is compiled shortly after the server listens (warmAll), one item per
 * turn of the event loop, so that requests are served in between and a
 * schema ajv refuses is still reported within moments of starting.
 */
export class DeferredCompilation {
  readonly #pending = new Set<() => unknown>();

  /** A getter that runs compile once, on its first call (or during warmAll), and returns its result. */
  defer<T>(compile: () => T): () => T {
    let result: { value: T } | undefined;
    const get = (): T => {
      if (!result) {
        this.#pending.delete(get);
        result = { value: compile() };
      }
      return result.value;
    };
    this.#pending.add(get);
    return get;
  }

  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Compiles everything still pending, one item per setImmediate, starting
   * afterMs from now; onError hears about each failure, and onDone once
   * nothing is left (not when stopped). Returns a stop function: an app
   * closed before its warm-up ends compiles nothing more.
   */
  warmAll(onError: (error: unknown) => void, afterMs = 0, onDone?: (compiled: number) => void): () => void {
    let stopped = false;
    let compiled = 0;
    const next = (): void => {
      if (stopped) return;
      const [first] = this.#pending;
      if (!first) {
        onDone?.(compiled);
        return;
      }
      compiled += 1;
      try {
        first();
      } catch (error) {
        onError(error);
      }
      setImmediate(next);
    };
    const timer = afterMs > 0 ? setTimeout(next, afterMs).unref() : undefined;
    if (!timer) setImmediate(next);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }
}
