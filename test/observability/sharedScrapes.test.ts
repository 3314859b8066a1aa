import t from 'tap';
import { sharedRender, type RenderClock } from '../../src/observability/metricsServer.js';

// Concurrent scrapes share one render (startMetricsServer renders through sharedRender): the render runs on
// the event loop the API answers on, so N scrapers rendering each their own would slow every API request.

/** A render that waits until the test ends it, counted. */
function heldRender() {
  let renders = 0;
  const pending: Array<{ resolve: (text: string) => void; reject: (error: Error) => void }> = [];
  return {
    render: () => {
      renders += 1;
      return new Promise<string>((resolve, reject) => pending.push({ resolve, reject }));
    },
    renders: () => renders,
    end: (text: string) => pending.shift()?.resolve(text),
    fail: () => pending.shift()?.reject(new Error('registry broke')),
  };
}

/** A clock the test moves; a sleep is recorded and ends when the test says. */
function testClock() {
  let now = 0;
  const sleeps: Array<{ ms: number; end: () => void }> = [];
  const clock: RenderClock = {
    now: () => now,
    sleep: (ms) => new Promise<void>((resolve) => sleeps.push({ ms, end: resolve })),
  };
  return {
    clock,
    sleeps,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

t.test('scrapes during a render share it; the next one renders anew', async (t) => {
  const held = heldRender();
  const render = sharedRender(held.render, testClock().clock);
  const during = Array.from({ length: 20 }, () => render());
  t.equal(held.renders(), 1, 'one render for twenty scrapes');
  held.end('# one\n');
  t.same(await Promise.all(during), Array(20).fill('# one\n'), 'each got it');
  const later = render();
  t.equal(held.renders(), 2, 'a scrape after the render ended renders anew');
  held.end('# two\n');
  t.equal(await later, '# two\n');
});

t.test('a failed render fails the scrapes that shared it, and the next scrape tries again', async (t) => {
  const held = heldRender();
  const render = sharedRender(held.render, testClock().clock);
  const during = [render(), render()];
  held.fail();
  for (const scrape of during) await t.rejects(scrape, /registry broke/);
  const again = render();
  t.equal(held.renders(), 2, 'rendered again');
  held.end('# back\n');
  t.equal(await again, '# back\n');
});

t.test('after a render, the loop rests three times its length (at most 250 ms) before the next one', async (t) => {
  const held = heldRender();
  const time = testClock();
  const render = sharedRender(held.render, time.clock);
  const first = render();
  time.advance(40);
  held.end('# first\n');
  t.equal(await first, '# first\n');
  const waiting = [render(), render()];
  t.equal(held.renders(), 1, 'no render begins while the loop rests');
  t.same(
    time.sleeps.map((entry) => entry.ms),
    [120],
    'one rest, three times the 40 ms render, shared by the scrapes that arrived',
  );
  time.advance(120);
  time.sleeps[0]!.end();
  await new Promise(setImmediate);
  t.equal(held.renders(), 2, 'then one render for both, begun after they arrived');
  time.advance(1000);
  held.end('# second\n');
  t.same(await Promise.all(waiting), ['# second\n', '# second\n']);
  const third = render();
  t.equal(time.sleeps.at(-1)?.ms, 250, "a render that waited 1 s (for a cluster's workers) rests 250 ms, not 3 s");
  time.advance(250);
  time.sleeps.at(-1)!.end();
  await new Promise(setImmediate);
  t.equal(held.renders(), 3);
  held.end('# third\n');
  await third;
  time.advance(10_000);
  const fresh = render();
  t.equal(held.renders(), 4, 'a scrape long after the rest renders at once');
  held.end('# fourth\n');
  t.equal(await fresh, '# fourth\n');
});
