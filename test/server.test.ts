import t from 'tap';
import { existsSync } from 'node:fs';
import { scratchDir } from './helpers/databases.js';
import { finished, runEntry, spawnEntry, waitForOutput } from './helpers/processes.js';

t.test('npm start on the embedded default: a first key, real HTTP, a clean stop', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const server = spawnEntry('src/server.ts', [], { DATA_DIR: dir.path, PORT: '0' });
  t.teardown(() => server.kill('SIGKILL'));
  const output = finished(server);
  const keyLine = waitForOutput(server, /\n {4}(pets_[A-Za-z0-9_-]{43})\n/);
  const [, baseUrl] = await waitForOutput(server, /serving (http:\/\/127\.0\.0\.1:\d+\/v1)/);
  const [, key] = await keyLine;

  const unauthorized = await fetch(`${baseUrl}/pets`);
  t.equal(unauthorized.status, 401);
  const created = await fetch(`${baseUrl}/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  });
  t.equal(created.status, 201);
  const listed = await fetch(`${baseUrl}/pets`, { headers: { authorization: `Bearer ${key}` } });
  t.same(((await listed.json()) as Array<{ name: string }>).map((pet: { name: string }) => pet.name), ['Rex']);
  t.ok(existsSync(`${dir.path}/pets.lock`), 'the data directory is locked while serving');

  server.kill('SIGTERM');
  const result = await output;
  t.equal(result.code, 0, 'exits 0 on SIGTERM');
  t.notOk(existsSync(`${dir.path}/pets.lock`), 'the lock is released');

  const restarted = spawnEntry('src/server.ts', [], { DATA_DIR: dir.path, PORT: '0', BOOTSTRAP_API_KEY: 'bootstrap-key-for-tests-0001' });
  t.teardown(() => restarted.kill('SIGKILL'));
  const restartOutput = finished(restarted);
  const [, secondUrl] = await waitForOutput(restarted, /serving (http:\/\/127\.0\.0\.1:\d+\/v1)/);
  const kept = await fetch(`${secondUrl}/pets`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(kept.status, 200, 'the first key and the data survive a restart');
  t.equal(((await kept.json()) as unknown[]).length, 1);
  const bootstrap = await fetch(`${secondUrl}/pets`, { headers: { authorization: 'Bearer bootstrap-key-for-tests-0001' } });
  t.equal(bootstrap.status, 200, 'BOOTSTRAP_API_KEY is accepted');
  restarted.kill('SIGINT');
  const second = await restartOutput;
  t.equal(second.code, 0);
  t.notMatch(second.stdout, /No API key existed/, 'no new key is made when keys exist');
});

t.test('a second server on the same data directory is refused', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const first = spawnEntry('src/server.ts', [], { DATA_DIR: dir.path, PORT: '0', BOOTSTRAP_API_KEY: 'bootstrap-key-for-tests-0002' });
  t.teardown(() => first.kill('SIGKILL'));
  const firstDone = finished(first);
  await waitForOutput(first, /serving http/);
  const second = await runEntry('src/server.ts', [], { DATA_DIR: dir.path, PORT: '0' });
  t.equal(second.code, 1);
  t.match(second.stderr, /in use by process \d+/);
  first.kill('SIGTERM');
  t.equal((await firstDone).code, 0);
});
