/** Something that takes observations: a prom-client histogram series. */
export interface Observer {
  observe(value: number): void;
}

/**
 * Observations recorded on the request path and handed to their histogram
 * series in batches: once `capacity` are waiting, `maxWaitMs` after the
 * first of them, or when flush() is called (the histogram's collect, so a
 * scrape sees every observation). prom-client's observe costs about 3 µs of
 * CPU per call under load, where the caches are cold between two requests,
 * and well under 1 µs in a loop over a batch; recording costs two array
 * writes.
 */
export function batchedObservations(capacity = 256, maxWaitMs = 100) {
  const targets: (Observer | undefined)[] = new Array<Observer | undefined>(capacity);
  const values = new Float64Array(capacity);
  let waiting = 0;
  let timer: NodeJS.Timeout | undefined;

  function flush(): void {
    clearTimeout(timer);
    timer = undefined;
    const count = waiting;
    waiting = 0;
    for (let index = 0; index < count; index++) {
      targets[index]?.observe(values[index] ?? 0);
      targets[index] = undefined;
    }
  }

  function record(target: Observer, value: number): void {
    // prom-client throws on a value that is not finite; a batch must not.
    if (!Number.isFinite(value)) return;
    targets[waiting] = target;
    values[waiting] = value;
    waiting += 1;
    if (waiting === capacity) flush();
    else if (timer === undefined) timer = setTimeout(flush, maxWaitMs).unref();
  }

  return { record, flush, waiting: () => waiting };
}
