import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { DeferredCompilation } from '../../src/http/operations/deferredCompile.js';
import { responseValidationAjv } from '../../src/http/operations/responseAjv.js';
import { noDatabase, testConfig, testLimits } from '../helpers/app.js';

/**
 * The warm-up's timer is unref'd (it must not keep a closing app alive), so
 * a test awaiting its end holds the process open with a ceiling of its own.
 */
async function endOf(warmUp: Promise<number>): Promise<number | 'not ended'> {
  let ceiling: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'not ended'>((resolve) => {
    ceiling = setTimeout(() => {
      resolve('not ended');
    }, 60_000);
  });
  try {
    return await Promise.race([warmUp, timedOut]);
  } finally {
    clearTimeout(ceiling);
  }
}

t.test('a deferred compile runs on first use, once', async (t) => {
  const deferred = new DeferredCompilation();
  let runs = 0;
  const get = deferred.defer(() => ++runs);
  t.equal(runs, 0, 'nothing compiled at definition');
  t.equal(deferred.pending, 1);
  t.equal(get(), 1);
  t.equal(get(), 1, 'the first result is kept');
  t.equal(runs, 1);
  t.equal(deferred.pending, 0);
});

t.test('warmAll compiles everything pending and reports each failure', async (t) => {
  const deferred = new DeferredCompilation();
  const compiled: string[] = [];
  deferred.defer(() => compiled.push('a'));
  deferred.defer(() => {
    throw new Error('bad schema');
  });
  deferred.defer(() => compiled.push('c'));
  const errors: unknown[] = [];
  const done = new Promise<number>((resolve) => deferred.warmAll((error) => errors.push(error), 0, resolve));
  t.same(compiled, [], 'not in the same turn: requests get served in between');
  t.equal(await endOf(done), 3, 'the end is reported, with how many were compiled, failures included');
  t.same(compiled, ['a', 'c']);
  t.equal(errors.length, 1);
  t.match(String(errors[0]), /bad schema/);
  t.equal(deferred.pending, 0);
});

t.test('warmAll with a delay compiles nothing until it has passed, then everything', async (t) => {
  const deferred = new DeferredCompilation();
  const compiled: string[] = [];
  deferred.defer(() => compiled.push('a'));
  deferred.defer(() => compiled.push('b'));
  const started = Date.now();
  const done = new Promise<number>((resolve) => deferred.warmAll(() => undefined, 300, resolve));
  for (let turn = 0; turn < 50; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  t.same(compiled, [], 'the first requests after listening have the process to themselves');
  t.equal(await endOf(done), 2);
  t.same(compiled, ['a', 'b']);
  t.ok(Date.now() - started >= 300, 'not before the delay');
});

t.test('a stopped warm-up compiles nothing more', async (t) => {
  const deferred = new DeferredCompilation();
  const compiled: string[] = [];
  deferred.defer(() => compiled.push('a'));
  deferred.defer(() => compiled.push('b'));
  const ended = () => t.fail('a stopped warm-up does not say it ended');
  const stopDelayed = deferred.warmAll(() => undefined, 50, ended);
  stopDelayed();
  await sleep(150);
  t.same(compiled, [], 'stopped before its delay: nothing');
  const stop = deferred.warmAll(() => undefined, 0, ended);
  await new Promise((resolve) => setImmediate(resolve));
  stop();
  await sleep(50);
  t.same(compiled, ['a'], 'stopped after one item: no more');
  t.equal(deferred.pending, 1);
});

t.test('response validation: first error on the hot path, the whole list on failure', async (t) => {
  const deferred = new DeferredCompilation();
  const ajv = responseValidationAjv(deferred, { coerceTypes: false, useDefaults: false, removeAdditional: false });
  const validate = ajv.compile({
    type: 'object',
    required: ['id', 'name'],
    properties: { id: { type: 'integer' }, name: { type: 'string' } },
  });
  t.equal(deferred.pending, 1, 'compiled on first use');
  t.equal(validate({ id: 1, name: 'Rex' }), true);
  t.equal(deferred.pending, 0);
  t.equal(validate({ id: 'one', name: 2 }), false);
  t.same(
    validate.errors?.map((error) => error.instancePath),
    ['/id', '/name'],
    'every error of the failing response is reported',
  );
  t.equal(validate({ id: 2, name: 'Fido' }), true, 'valid again after a failure');
});

t.test('an app that compiles before listening (a cluster worker) is warm once ready', async (t) => {
  const lines: string[] = [];
  const app = await buildApp(
    { ...testConfig, LOG_LEVEL: 'info' },
    {
      db: noDatabase,
      logStream: { write: (line) => lines.push(line) },
      limits: testLimits,
      compileBeforeListening: true,
    },
  );
  t.teardown(() => app.close());
  await app.ready();
  const compiled = lines.map((line) => JSON.parse(line) as { msg?: string; compiled?: number });
  const done = compiled.find((line) => line.msg === 'schemas compiled');
  t.ok(done, 'every schema compiled before ready() resolved, so before any connection');
  t.ok((done?.compiled ?? 0) > 0, `${done?.compiled} compiled`);
});
