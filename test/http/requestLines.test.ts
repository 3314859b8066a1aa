import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import t from 'tap';
import { routeOf } from '../../src/http/pipeline.js';
import { lineFormatOf } from '../../src/observability/logging.js';
import { requestLines } from '../../src/http/observation/requestLines.js';
import { logTimestamp } from '../../src/observability/requestLine.js';
import { lazyChildLogger, RequestLogger } from '../../src/observability/requestLogger.js';

interface Line {
  time: number;
  msg: string;
  path?: string;
  route?: string | null;
  status?: number;
  requestId?: string;
  traceId?: string;
}

/**
 * An app logging as the service does (request ids, the lazy request
 * logger), its request lines formatted by requestLines: into `sink` when
 * `direct`, else through pino. Every line pino writes lands in `pinoLines`.
 */
async function appWith(direct: boolean, level = 'info') {
  const pinoLines: string[] = [];
  const sink: string[] = [];
  let nextId = 0;
  const app = Fastify({
    logger: { level, timestamp: logTimestamp, stream: { write: (line: string) => pinoLines.push(line) } },
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: () => `req-${(nextId += 1)}`,
    childLoggerFactory: lazyChildLogger,
  });
  app.decorateRequest('routeFacts', undefined);
  const format = lineFormatOf(app.log);
  const lines = direct ? requestLines({ write: (line) => sink.push(line) > 0 }, format) : requestLines();
  app.addHook('onResponse', (request, reply, done) => {
    lines.record(request, reply);
    done();
  });
  app.get('/pets/:id', async (request) => ({ route: routeOf(request).url }));
  app.get('/traced', async (request) => {
    // What tracing does: a logger of its own, with one more binding.
    request.log = request.log.child({ traceId: 'trace-1' });
    return {};
  });
  app.get('/fails', async (request, reply) => {
    request.log.error('something went wrong');
    return reply.code(503).send({});
  });
  await app.ready();
  const parsed = (lines: string[]) =>
    lines.map((line) => JSON.parse(line) as Line).filter((line) => line.msg === 'request completed');
  return {
    app,
    format,
    sink,
    pinoLines,
    written: () => parsed(direct ? sink : pinoLines),
    pinoParsed: () => parsed(pinoLines),
  };
}

const withoutTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

t.test('a line formatted directly is the line pino writes: same keys, same order, same values', async (t) => {
  const viaPino = await appWith(false);
  const direct = await appWith(true);
  t.ok(direct.format, 'the format is read off the pino logger');
  for (const url of ['/pets/1?secret=x', '/pets/a%22b%5C', '/nowhere/"quoted"', '/fails']) {
    await viaPino.app.inject(url);
    await direct.app.inject(url);
  }
  const fromPino = viaPino.pinoLines.filter((line) => line.includes('"request completed"')).map(withoutTime);
  const formatted = direct.sink.map(withoutTime);
  t.equal(formatted.length, 4, 'one line per request');
  // durationMs differs from one run to the next; everything else must be byte for byte the same.
  const withoutDuration = (line: string) => line.replace(/"durationMs":[\d.]+/, '"durationMs":0');
  t.same(formatted.map(withoutDuration), fromPino.map(withoutDuration));
  t.match(direct.written()[0], { path: '/pets/1', route: '/pets/:id', status: 200, requestId: 'req-1' });
  t.equal(direct.written()[2]?.route, null, 'an unmatched route is null');
});

t.test('a line keeps the time its request completed', async (t) => {
  const { app, written } = await appWith(true);
  const before = Date.now();
  await app.inject('/pets/1');
  const after = Date.now();
  const time = written()[0]?.time ?? 0;
  t.ok(time >= before && time <= after, `time ${time} within the request (${before}-${after})`);
});

t.test('a request whose logger was replaced (tracing) is logged through pino, with its bindings', async (t) => {
  const { app, sink, pinoParsed } = await appWith(true);
  await app.inject('/traced');
  t.equal(sink.length, 0, 'not formatted directly');
  t.match(pinoParsed(), [{ path: '/traced', traceId: 'trace-1', requestId: 'req-1', status: 200 }]);
});

t.test('a request that logged something still gets its line, after what it logged', async (t) => {
  const { app, written, pinoLines } = await appWith(true);
  await app.inject('/fails');
  t.match(JSON.parse(pinoLines[0] ?? '{}'), { msg: 'something went wrong', requestId: 'req-1', level: 50 });
  t.match(written(), [{ path: '/fails', status: 503, requestId: 'req-1' }]);
});

t.test('above info, no request line is written, either way', async (t) => {
  for (const direct of [true, false]) {
    const { app, written } = await appWith(direct, 'warn');
    await app.inject('/pets/1');
    t.equal(written().length, 0, direct ? 'direct' : 'through pino');
  }
});

t.test('the request logger makes its pino child on first use only, once', async (t) => {
  let children = 0;
  const parent = {
    level: 'info',
    child(bindings: Record<string, unknown>) {
      children += 1;
      const logged: unknown[] = [];
      return { ...parent, bindings, logged, info: (...args: unknown[]) => logged.push(args) };
    },
  } as unknown as FastifyBaseLogger;
  const log = lazyChildLogger(parent, { requestId: 'r' }, {});
  t.ok(log instanceof RequestLogger);
  t.equal(log.level, 'info', "the parent's level");
  t.equal(children, 0, 'no child until something logs');
  log.info('one');
  log.info('two');
  t.equal(children, 1, 'one child, made on first use');
});
