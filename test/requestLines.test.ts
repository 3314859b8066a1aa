import Fastify from 'fastify';
import t from 'tap';
import { routeOf } from '../src/http/pipeline.js';
import { logTimestamp, requestLines } from '../src/http/plugins/requestLines.js';

interface Line {
  time: number;
  msg: string;
  path?: string;
  route?: string | null;
  status?: number;
}

/** An app whose request lines go through requestLines(batched, capacity, maxWaitMs), into `lines`. */
async function appWith(batched: boolean, capacity: number, maxWaitMs: number) {
  const lines: Line[] = [];
  const app = Fastify({
    logger: {
      level: 'info',
      timestamp: logTimestamp,
      stream: { write: (line: string) => lines.push(JSON.parse(line) as Line) },
    },
    disableRequestLogging: true,
  });
  app.decorateRequest('routeFacts', undefined);
  const log = requestLines(batched, capacity, maxWaitMs);
  app.addHook('onResponse', (request, reply, done) => {
    log.record(request, reply);
    done();
  });
  app.get('/pets/:id', async (request) => ({ route: routeOf(request).url }));
  await app.ready();
  const requestLinesOnly = () => lines.filter((line) => line.msg === 'request completed');
  return { app, log, lines: requestLinesOnly };
}

t.test('batched: lines wait until the batch is full, then are written in order', async (t) => {
  const { app, lines } = await appWith(true, 3, 60_000);
  await app.inject('/pets/1?secret=x');
  await app.inject('/pets/2');
  t.equal(lines().length, 0, 'nothing written yet');
  await app.inject('/pets/3');
  t.same(
    lines().map((line) => [line.path, line.route, line.status]),
    [
      ['/pets/1', '/pets/:id', 200],
      ['/pets/2', '/pets/:id', 200],
      ['/pets/3', '/pets/:id', 200],
    ],
    'in order, the query string left out',
  );
});

t.test('batched: a line keeps the time its request completed, not the time it is written', async (t) => {
  const { app, lines } = await appWith(true, 100, 150);
  const before = Date.now();
  await app.inject('/pets/1');
  const after = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.equal(lines().length, 1, 'written after maxWaitMs');
  const time = lines()[0]?.time ?? 0;
  t.ok(time >= before && time <= after, `time ${time} within the request (${before}-${after})`);
});

t.test('batched: close writes what waits', async (t) => {
  const { app, log, lines } = await appWith(true, 100, 60_000);
  await app.inject('/pets/1');
  t.equal(lines().length, 0);
  log.close();
  t.equal(lines().length, 1);
});

t.test('not batched: each line is written at once', async (t) => {
  const { app, lines } = await appWith(false, 100, 60_000);
  await app.inject('/pets/1');
  t.equal(lines().length, 1);
});
