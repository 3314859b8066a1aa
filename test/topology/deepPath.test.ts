import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { startHaproxy } from '../../lib/instances/index.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { topologyTestOptions } from './harness.js';

/**
 * The topology from a checkout at a deep path, as a CI workspace
 * (/home/runner/work/<repo>/<repo>) makes one: `npm run topology -- up`,
 * `status` and `down` as a user runs them, with every file the topology
 * writes under a folder whose path is longer than any Unix socket allows.
 */

const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');
/** Past the kernel's 107-byte socket path limit on its own, before our nested folders. */
const deepPathLength = 120;

function deepFolder(): string {
  let path = join(tmpdir(), 'pets-deep-checkout');
  while (path.length < deepPathLength) path = join(path, 'workspace-folder');
  mkdirSync(path, { recursive: true });
  return path;
}

function runScript(script: string, env: NodeJS.ProcessEnv) {
  return spawnSync(tsx, [join(repoRoot, 'scripts', 'topology', script)], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 240_000,
  });
}

t.test('npm run topology -- up, status and down from a deep path', topologyTestOptions(), async (t) => {
  const deep = deepFolder();
  const topologyDir = join(deep, '.run', 'topology');
  t.teardown(() => {
    runScript('down.ts', { TOPOLOGY_DIR: topologyDir });
    rmSync(join(tmpdir(), 'pets-deep-checkout'), { recursive: true, force: true });
  });
  t.ok(topologyDir.length > deepPathLength, `the topology folder's path is ${topologyDir.length} characters`);

  // Judge only the folders this run made: another run on the machine, or a killed one, may keep its own.
  const socketFolders = () => readdirSync(tmpdir()).filter((name) => name.startsWith('pets-haproxy-'));
  const othersFolders = new Set(socketFolders());
  const up = runScript('up.ts', { TOPOLOGY_DIR: topologyDir });
  t.equal(up.status, 0, `topology up exits 0 (stderr: ${up.stderr.trim().slice(-600)})`);
  const baseUrl = /^BASE_URL=(.+)$/m.exec(up.stdout)?.[1];
  const apiKey = /^API_KEY=(.+)$/m.exec(up.stdout)?.[1];
  if (!baseUrl || !apiKey) return t.fail(`no BASE_URL and API_KEY in:\n${up.stdout}`);
  const listed = await fetch(`${baseUrl}/pets`, { headers: { authorization: `Bearer ${apiKey}` } });
  t.equal(listed.status, 200, 'the balancer answers a listPets with the key it printed');

  const status = runScript('status.ts', { TOPOLOGY_DIR: topologyDir });
  t.equal(status.status, 0, `topology status exits 0 (stderr: ${status.stderr.trim().slice(-300)})`);
  t.match(status.stdout, /\bUP\b/, 'and reads the balancer through its admin socket');

  const down = runScript('down.ts', { TOPOLOGY_DIR: topologyDir });
  t.equal(down.status, 0, 'topology down exits 0');
  t.notOk(existsSync(topologyDir), 'and removes the topology folder');
  const socketsLeft = socketFolders().filter((name) => !othersFolders.has(name));
  t.same(socketsLeft, [], 'and the admin socket folder');
});

t.test('an HAProxy configuration error is reported in its own words', topologyTestOptions(), async (t) => {
  const folder = deepFolder();
  t.teardown(() => {
    rmSync(join(tmpdir(), 'pets-deep-checkout'), { recursive: true, force: true });
  });
  const configFile = join(folder, 'broken.cfg');
  writeFileSync(configFile, 'frontend pets\n    bind 127.0.0.1:1\n    no-such-keyword on\n');
  await t.rejects(
    startHaproxy({ servers: ['127.0.0.1:1'], configFile, parent: dirname(configFile) }),
    /no-such-keyword/,
    "the error names HAProxy's complaint, not only its exit status",
  );
});
