import t from 'tap';
import { waitUntil } from '../../lib/instances/processes.js';
import { batchedObservations, type Observer } from '../../src/observability/batchedObservations.js';

function series() {
  const seen: number[] = [];
  const observer: Observer = { observe: (value) => seen.push(value) };
  return { seen, observer };
}

t.test('observations wait until the batch is full, then reach their series in order', async (t) => {
  const batch = batchedObservations(3, 60_000);
  const a = series();
  const b = series();
  batch.record(a.observer, 1);
  batch.record(b.observer, 2);
  t.same([a.seen, b.seen], [[], []], 'nothing observed yet');
  t.equal(batch.waiting(), 2);
  batch.record(a.observer, 3);
  t.same([a.seen, b.seen], [[1, 3], [2]], 'the third fills the batch');
  t.equal(batch.waiting(), 0);
  batch.flush();
});

t.test('flush hands over what waits (a scrape sees every observation)', async (t) => {
  const batch = batchedObservations(100, 60_000);
  const a = series();
  batch.record(a.observer, 0.5);
  batch.flush();
  t.same(a.seen, [0.5]);
  batch.flush();
  t.same(a.seen, [0.5], 'nothing twice');
});

t.test('a lone observation is handed over after maxWaitMs', async (t) => {
  const batch = batchedObservations(100, 20);
  const a = series();
  batch.record(a.observer, 7);
  t.same(a.seen, [], 'held at first (the batch holds 100)');
  // Handed over by the timer alone: no flush, no further record.
  await waitUntil({ what: 'the lone observation handed over', timeoutMs: 30_000, intervalMs: 10 }, async () =>
    a.seen.length > 0 ? true : undefined,
  );
  t.same(a.seen, [7]);
});

t.test('a value that is not finite is dropped, not thrown later from a timer', async (t) => {
  const batch = batchedObservations(2, 60_000);
  const a = series();
  batch.record(a.observer, Number.NaN);
  batch.record(a.observer, Number.POSITIVE_INFINITY);
  t.equal(batch.waiting(), 0);
  batch.record(a.observer, 1);
  batch.flush();
  t.same(a.seen, [1]);
});
