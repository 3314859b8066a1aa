import t from 'tap';
import { sharedRender } from '../../src/observability/metricsServer.js';

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

t.test('scrapes during a render share it; the next one renders anew', async (t) => {
  const held = heldRender();
  const render = sharedRender(held.render);
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
  const render = sharedRender(held.render);
  const during = [render(), render()];
  held.fail();
  for (const scrape of during) await t.rejects(scrape, /registry broke/);
  const again = render();
  t.equal(held.renders(), 2, 'rendered again');
  held.end('# back\n');
  t.equal(await again, '# back\n');
});
