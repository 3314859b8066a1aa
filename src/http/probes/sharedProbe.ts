type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Wraps a probe so that it runs at most once per maxAgeMs, however many
 * callers ask: callers while it runs share that run, callers within maxAgeMs
 * after it settled get its outcome (a failure included). A flood of probe
 * requests thus costs the database one probe a second, not one per request.
 */
export function sharedProbe<T>(probe: () => Promise<T>, maxAgeMs: number, now: () => number = Date.now) {
  let inFlight: Promise<Outcome<T>> | undefined;
  let last: { at: number; outcome: Outcome<T> } | undefined;

  function run(): Promise<Outcome<T>> {
    inFlight ??= probe()
      .then(
        (value): Outcome<T> => ({ ok: true, value }),
        (error: unknown): Outcome<T> => ({ ok: false, error }),
      )
      .then((outcome) => {
        last = { at: now(), outcome };
        inFlight = undefined;
        return outcome;
      });
    return inFlight;
  }

  return async function probeShared(): Promise<T> {
    const outcome = last !== undefined && now() - last.at < maxAgeMs ? last.outcome : await run();
    if (outcome.ok) return outcome.value;
    throw outcome.error;
  };
}
