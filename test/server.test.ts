import t from 'tap';
import { generateApiKey } from '../src/auth/keys.js';
import { lockDataDir } from '../src/db/dataDirLock.js';
import { startServer } from './helpers/server.js';
import { migratedDataDir } from './helpers/databases.js';
import { finished, spawnEntry, textSink, waitForOutput } from './helpers/processes.js';

// startServer is what `npm start` runs; in-process it costs no tsx start-up.
// The last test spawns the real process for what only it shows: exit codes
// on SIGTERM and SIGINT, and a second process refused.

t.test('npm start on the embedded default: a first key, real HTTP, a clean stop', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const env = { DATA_DIR: dir.path, PORT: '0', LOG_LEVEL: 'silent', METRICS_PORT: 'off' };
  const printed = textSink();
  const server = await startServer(env, printed.stream);
  t.teardown(() => server.app.close());
  const key = /\n {4}(pets_[0-9A-Za-z]{49})\n/.exec(printed.text())?.[1] ?? '';
  t.ok(key, 'the first key is printed');
  const baseUrl = `${server.address}/v1`;
  t.match(printed.text(), `curl -H 'Authorization: Bearer ${key}' ${baseUrl}/pets`, 'the hint has the real address');

  const unauthorized = await fetch(`${baseUrl}/pets`);
  t.equal(unauthorized.status, 401);
  const created = await fetch(`${baseUrl}/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  });
  t.equal(created.status, 201);
  const listed = await fetch(`${baseUrl}/pets`, { headers: { authorization: `Bearer ${key}` } });
  t.same(
    ((await listed.json()) as Array<{ name: string }>).map((pet: { name: string }) => pet.name),
    ['Rex'],
  );
  await t.rejects(lockDataDir(dir.path), { name: 'DataDirLockedError' }, 'the data directory is locked while serving');
  t.equal(await server.shutdown('SIGTERM'), 0, 'a clean shutdown');

  const restartPrinted = textSink();
  const bootstrapKey = generateApiKey();
  const restarted = await startServer({ ...env, BOOTSTRAP_API_KEY: bootstrapKey }, restartPrinted.stream);
  t.teardown(() => restarted.app.close());
  const secondUrl = `${restarted.address}/v1`;
  const kept = await fetch(`${secondUrl}/pets`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(kept.status, 200, 'the first key and the data survive a restart');
  t.equal(((await kept.json()) as unknown[]).length, 1);
  const bootstrap = await fetch(`${secondUrl}/pets`, {
    headers: { authorization: `Bearer ${bootstrapKey}` },
  });
  t.equal(bootstrap.status, 200, 'BOOTSTRAP_API_KEY is accepted');
  t.equal(await restarted.shutdown('SIGINT'), 0);
  t.notMatch(restartPrinted.text(), /No API key existed/, 'no new key is made when keys exist');
});

t.test('the process: a second server is refused, SIGTERM and SIGINT exit 0', async (t) => {
  const dir = await migratedDataDir();
  t.teardown(dir.remove);
  const env = {
    DATA_DIR: dir.path,
    PORT: '0',
    METRICS_PORT: 'off',
    BOOTSTRAP_API_KEY: generateApiKey(),
  };
  const first = spawnEntry('src/server.ts', [], env);
  t.teardown(() => first.kill('SIGKILL'));
  const firstDone = finished(first);
  await waitForOutput(first, /serving http/);
  await t.rejects(
    startServer({ ...env, LOG_LEVEL: 'silent' }, textSink().stream),
    { name: 'StartupError', message: /in use by process \d+/ },
    'a second server on the same data directory is refused',
  );
  first.kill('SIGTERM');
  t.equal((await firstDone).code, 0, 'exits 0 on SIGTERM');
  const released = await lockDataDir(dir.path);
  t.pass('the lock is released');
  released.release();

  const again = spawnEntry('src/server.ts', [], env);
  t.teardown(() => again.kill('SIGKILL'));
  const againDone = finished(again);
  await waitForOutput(again, /serving http/);
  again.kill('SIGINT');
  t.equal((await againDone).code, 0, 'exits 0 on SIGINT');
});
