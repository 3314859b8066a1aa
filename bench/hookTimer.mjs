// Preloaded by bench/hookCosts.ts (node --import): globalThis.__timed(label, fn) wraps a function so
// that each call's CPU time, from its start until it returns or calls its last argument (a hook's
// `done`), whichever comes first, is added to the label's total. Totals are printed to stderr at
// SIGTERM as lines "TIMED <label> <calls> <ns per call>".
import process from 'node:process';

const totals = new Map();

globalThis.__timed = (label, fn) => {
  let total = totals.get(label);
  if (!total) {
    total = { calls: 0, ns: 0n };
    totals.set(label, total);
  }
  const counted = total;
  const wrapped = function (...args) {
    const started = process.hrtime.bigint();
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      counted.ns += process.hrtime.bigint() - started;
      counted.calls += 1;
    };
    const last = args.length - 1;
    if (last >= 0 && typeof args[last] === 'function') {
      const done = args[last];
      args[last] = function (...doneArgs) {
        stop();
        return done.apply(this, doneArgs);
      };
    }
    try {
      return fn.apply(this, args);
    } finally {
      stop();
    }
  };
  Object.defineProperty(wrapped, 'length', { value: fn.length });
  return wrapped;
};

process.on('SIGTERM', () => {
  for (const [label, total] of totals) {
    if (total.calls > 0) process.stderr.write(`TIMED ${label} ${total.calls} ${Number(total.ns) / total.calls}\n`);
  }
});
