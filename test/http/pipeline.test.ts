import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import t from 'tap';
import { afterResponse, routedPipeline, routeOf, type CompiledPath, type Step } from '../../src/http/pipeline.js';

/**
 * A fastify app whose one onRequest hook runs these steps before GET /things/:id answers 200;
 * GET /compiled/:id has its own steps compiled for it.
 */
async function appWith(steps: Step[], compiled: Step[] = []) {
  const app = Fastify();
  app.decorateRequest('routeFacts', undefined);
  app.addHook('onRequest', routedPipeline('whole', steps));
  app.get('/things/:id', async () => ({ ok: true }));
  const compiledPath: CompiledPath = { whole: compiled, arrival: [], admission: [] };
  app.get('/compiled/:id', { config: { compiledPath } }, async () => ({ ok: true }));
  app.setErrorHandler((error: Error, _request, reply) => reply.code(418).send({ failed: error.message }));
  await app.ready();
  return app;
}

function recorder() {
  const ran: string[] = [];
  const sync =
    (name: string): Step =>
    () => {
      ran.push(name);
    };
  const later =
    (name: string): Step =>
    async () => {
      await sleep(5);
      ran.push(name);
    };
  return { ran, sync, later };
}

t.test('steps run in order, waiting for those that return a promise', async (t) => {
  const { ran, sync, later } = recorder();
  const app = await appWith([sync('a'), later('b'), sync('c'), later('d'), sync('e')]);
  const response = await app.inject('/things/1');
  t.equal(response.statusCode, 200);
  t.same(ran, ['a', 'b', 'c', 'd', 'e']);
});

t.test('a step that throws answers the request; the later steps do not run', async (t) => {
  const { ran, sync } = recorder();
  const refuse: Step = () => {
    throw new Error('refused');
  };
  const app = await appWith([sync('a'), refuse, sync('never')]);
  const response = await app.inject('/things/1');
  t.equal(response.statusCode, 418);
  t.same(response.json(), { failed: 'refused' });
  t.same(ran, ['a']);
});

t.test('a step whose promise rejects answers the request; the later steps do not run', async (t) => {
  const { ran, later, sync } = recorder();
  const refuseLater: Step = async () => {
    await sleep(5);
    throw new Error('refused later');
  };
  const app = await appWith([later('a'), refuseLater, sync('never')]);
  const response = await app.inject('/things/1');
  t.equal(response.statusCode, 418);
  t.same(response.json(), { failed: 'refused later' });
  t.same(ran, ['a']);
});

t.test('a route with compiled steps runs those instead of the general ones; others run the general', async (t) => {
  const { ran, sync, later } = recorder();
  const app = await appWith([sync('general')], [sync('compiled'), later('compiled, later')]);
  t.equal((await app.inject('/compiled/1')).statusCode, 200);
  t.same(ran, ['compiled', 'compiled, later']);
  ran.length = 0;
  t.equal((await app.inject('/things/1')).statusCode, 200);
  t.equal((await app.inject('/nowhere')).statusCode, 404);
  t.same(ran, ['general', 'general'], 'a route without them, and an unrouted request');
});

t.test('routeOf reads the route once per request and keeps it', async (t) => {
  const seen: unknown[] = [];
  const look: Step = (request) => {
    seen.push(routeOf(request));
  };
  const app = await appWith([look, look]);
  t.equal((await app.inject('/things/1')).statusCode, 200);
  t.equal((await app.inject('/things/2')).statusCode, 200);
  t.equal(seen.length, 4);
  t.equal((seen[0] as { url: string }).url, '/things/:id');
  t.equal(seen[0], seen[1], 'the same object within a request');
  t.not(seen[1], seen[2], 'a new one for the next request');
});

t.test('after the response, every step runs even when one throws; the failure is logged', async (t) => {
  const lines: { level: number; msg: string; err?: { message: string } }[] = [];
  const app = Fastify({
    logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line) as never) } },
  });
  const ran: string[] = [];
  app.addHook(
    'onResponse',
    afterResponse(
      () => {
        ran.push('first');
        throw new Error('metric broke');
      },
      (_request, reply) => {
        ran.push(`second saw ${reply.statusCode}`);
      },
    ),
  );
  app.get('/', async () => ({ ok: true }));
  t.equal((await app.inject('/')).statusCode, 200);
  t.same(ran, ['first', 'second saw 200']);
  const failure = lines.find((line) => line.msg === 'an onResponse step failed');
  t.equal(failure?.level, 50, 'logged as an error');
  t.equal(failure?.err?.message, 'metric broke');
});
