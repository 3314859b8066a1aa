import t from 'tap';
import { sharedProbe } from '../../src/http/probes/sharedProbe.js';

t.test('callers share a running probe and its outcome for maxAgeMs, failures included', async (t) => {
  let clock = 0;
  let runs = 0;
  let fail = false;
  const probe = sharedProbe(
    async () => {
      runs += 1;
      await new Promise((resolve) => setImmediate(resolve));
      if (fail) throw new Error('down');
      return runs;
    },
    1000,
    () => clock,
  );
  t.same(await Promise.all([probe(), probe(), probe()]), [1, 1, 1], 'concurrent callers share one run');
  clock = 999;
  t.equal(await probe(), 1, 'within maxAgeMs the outcome is reused');
  t.equal(runs, 1);
  clock = 1000;
  fail = true;
  await t.rejects(Promise.all([probe(), probe()]), /down/, 'a new run once the outcome is maxAgeMs old');
  t.equal(runs, 2);
  fail = false;
  await t.rejects(probe(), /down/, 'a failure is reused too: an outage is not probed per request');
  clock = 2000;
  t.equal(await probe(), 3, 'and probed again a second later');
});
