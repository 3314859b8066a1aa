/**
 * A sum of doubles kept exactly, as non-overlapping partials (Shewchuk's
 * algorithm, the one behind Python's math.fsum), and read correctly rounded.
 *
 * Why the cluster primary sums this way: a plain `a + b + c` depends on the
 * order of its terms, and the order changes when a worker dies (its last
 * values join the departed workers' sum) or is forked again, so a float
 * counter's sum (a histogram's `_sum`) could come out one ulp lower than the
 * scrape before; Prometheus reads any drop as a counter reset. The exact sum
 * of counters never goes down, and rounding to nearest is monotonic, so the
 * value read never goes down either, whatever the order.
 */
export class ExactSum {
  readonly #partials: number[] = [];

  constructor(from?: ExactSum) {
    if (from) this.#partials.push(...from.#partials);
  }

  add(value: number): this {
    let x = value;
    let kept = 0;
    for (const partial of this.#partials) {
      const [big, small] = Math.abs(x) < Math.abs(partial) ? [partial, x] : [x, partial];
      const high = big + small;
      const low = small - (high - big);
      if (low !== 0) this.#partials[kept++] = low;
      x = high;
    }
    this.#partials.length = kept;
    this.#partials.push(x);
    return this;
  }

  /** The exact sum rounded to the nearest double (ties to even). */
  get value(): number {
    const partials = this.#partials;
    let n = partials.length;
    if (n === 0) return 0;
    // Infinity or NaN among the terms: no exact sum to keep; the plain one says what happened.
    if (partials.some((partial) => !Number.isFinite(partial))) return partials.reduce((sum, p) => sum + p, 0);
    n -= 1;
    let high = partials[n] ?? 0;
    let low = 0;
    while (n > 0) {
      const x = high;
      n -= 1;
      const y = partials[n] ?? 0;
      high = x + y;
      low = y - (high - x);
      if (low !== 0) break;
    }
    // Round half to even when the rest of the partials lean the same way as low.
    const next = n > 0 ? (partials[n - 1] ?? 0) : 0;
    if ((low < 0 && next < 0) || (low > 0 && next > 0)) {
      const doubled = low * 2;
      const candidate = high + doubled;
      if (candidate - high === doubled) high = candidate;
    }
    return high;
  }
}
