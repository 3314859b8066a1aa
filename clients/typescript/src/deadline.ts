/** One call's lifetime: aborted by the caller's signal or at its deadline, whichever comes first. */
export interface CallScope {
  /** Aborts every attempt and wait of the call; its reason is what the call throws. */
  readonly signal: AbortSignal;
  /** Date.now() at which the deadline passes. */
  readonly deadline: number;
  /** Releases the timer and the listener on the caller's signal. */
  end(): void;
}

/** The TimeoutError (a DOMException, as AbortSignal.timeout gives) a call throws at its deadline. */
export function timeoutError(timeoutMs: number): DOMException {
  return new DOMException(`The call did not finish within timeoutMs (${timeoutMs} ms)`, 'TimeoutError');
}

export function startCall(timeoutMs: number, callerSignal: AbortSignal | undefined): CallScope {
  const controller = new AbortController();
  const onCallerAbort = () => {
    controller.abort(callerSignal?.reason);
  };
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  const timer = setTimeout(() => {
    controller.abort(timeoutError(timeoutMs));
  }, timeoutMs);
  return {
    signal: controller.signal,
    deadline: Date.now() + timeoutMs,
    end: () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}

/** Resolves after ms, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
