import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { isAlive, startTimeOf, waitUntil } from '../../lib/instances/index.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { checkGeneratedRequests } from '../conformance/overHttp.js';
import { walkPets, type Pet } from '../helpers/pages.js';
import { deepFolder, deepPathLength, topologyTestOptions } from './harness.js';

/**
 * The topology as an operator starts it (`npm run topology -- up`), from a
 * checkout at a deep path, as a CI workspace (/home/runner/work/<repo>/<repo>)
 * makes one: TOPOLOGY_DIR is a folder whose path is longer than any Unix
 * socket allows. The conformance suite's generated requests are sent through
 * HAProxy, PgBouncer in transaction mode and the replica, then
 * `topology -- status` and `topology -- down` run as a user runs them. One
 * `up` (the failover tier, a minute of pg_auto_failover) serves every claim.
 *   TOPOLOGY_CONFORMANCE_RUNS   runs per property (default 150)
 */

const runs = Number(process.env['TOPOLOGY_CONFORMANCE_RUNS'] || 150);

function runScript(script: string, folder: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join('scripts', 'topology', script)], {
    cwd: repoRoot,
    env: { ...process.env, TOPOLOGY_DIR: folder },
    encoding: 'utf8',
    timeout: 240_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

t.test(
  'npm run topology -- up, then the conformance suite through the balancer, status and down',
  topologyTestOptions(['DATABASE_STATEMENTS']),
  async (t) => {
    const deep = deepFolder();
    const folder = join(deep.path, '.run', 'topology');
    t.teardown(() => {
      // Whatever happened, nothing it started may outlive the test.
      runScript('down.ts', folder);
      rmSync(deep.root, { recursive: true, force: true });
    });
    t.ok(folder.length > deepPathLength, `the topology folder's path is ${folder.length} characters`);

    const up = runScript('up.ts', folder);
    t.comment(up.stdout.trimEnd());
    t.equal(up.status, 0, 'topology up exits 0');
    if (up.status !== 0) {
      t.fail(`topology up failed:\n${up.stdout}\n${up.stderr}`);
      return;
    }
    const lines = up.stdout.trimEnd().split('\n');
    const baseUrl = /^BASE_URL=(http:\/\/127\.0\.0\.1:\d+\/v1)$/.exec(lines.at(-2) ?? '')?.[1];
    const apiKey = /^API_KEY=(\S{20,})$/.exec(lines.at(-1) ?? '')?.[1];
    t.ok(baseUrl, `the line before last is BASE_URL=http://127.0.0.1:<port>/v1 (got ${lines.at(-2)})`);
    t.ok(apiKey, 'the last line is API_KEY=<key>');
    if (!baseUrl || !apiKey) return;
    const origin = new URL(baseUrl).origin;
    const listed = await fetch(`${baseUrl}/pets`, { headers: { authorization: `Bearer ${apiKey}` } });
    await listed.text();
    t.equal(listed.status, 200, 'the balancer answers a listPets with the key it printed');

    await t.test('generated requests conform to openapi.yaml through HAProxy', (t) =>
      checkGeneratedRequests(t, {
        origin,
        basePath: new URL(baseUrl).pathname,
        apiKey,
        runs,
        through: 'the balancer',
      }),
    );

    await t.test('what is created can be read back at once, and pages list each pet once in id order', async (t) => {
      const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
      const created: Pet[] = [];
      const unreadable: string[] = [];
      for (let index = 0; index < 30; index += 1) {
        const response = await fetch(`${baseUrl}/pets`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ name: `walk-${index}`, categoryId: 1 + (index % 3) }),
        });
        if (response.status !== 201) throw new Error(`createPet answered ${response.status} ${await response.text()}`);
        const pet = (await response.json()) as Pet;
        created.push(pet);
        const read = await fetch(`${baseUrl}/pets/${pet.id}`, { headers: auth });
        if (read.status !== 200) unreadable.push(`${pet.id}: ${read.status}`);
        await read.text();
      }
      t.same(
        unreadable,
        [],
        'each of 30 new pets readable right after its creation (read-your-writes through the balancer)',
      );
      // A listing may come from the replica, which may lag by milliseconds:
      // wait (bounded) until it shows every created pet, then check the pages.
      const listed = await waitUntil({ what: 'the listing showing every created pet', timeoutMs: 10_000 }, async () => {
        const pets = await walkPets(baseUrl, apiKey, 7);
        return created.every((pet) => pets.some((listedPet) => listedPet.id === pet.id)) ? pets : undefined;
      }).catch(() => walkPets(baseUrl, apiKey, 7));
      const ids = listed.map((pet) => pet.id);
      t.equal(new Set(ids).size, ids.length, 'no pet listed twice');
      t.same(
        ids,
        [...ids].sort((a, b) => a - b),
        'in id order',
      );
      const missing = created.filter((pet) => !ids.includes(pet.id)).map((pet) => pet.id);
      t.same(missing, [], 'every created pet is listed');
    });

    const stateFile = join(folder, 'state.json');
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as {
      processes: Array<{ name: string; pid: number; startTime?: number }>;
      haproxySocket: string;
      postgresRouterSocket?: string;
    };
    // The admin sockets' folders, short ones of their own outside the topology's folder (lib/instances/haproxy.ts):
    // this run's, by name, since other runs on the machine keep theirs.
    const socketFolders = [state.haproxySocket, state.postgresRouterSocket ?? ''].filter(Boolean).map(dirname);

    await t.test('topology status shows every process running', async (t) => {
      const status = runScript('status.ts', folder);
      t.equal(status.status, 0, 'exits 0 while everything runs');
      for (const record of state.processes)
        t.match(
          status.stdout,
          new RegExp(`^${record.name}\\s+${record.pid}\\s+\\d+\\s+running, accepting`, 'm'),
          `${record.name} listed with its pid`,
        );
      t.match(status.stdout, /app1 .*balancer: UP/, 'with the balancer view, read through its admin socket');
    });

    await t.test('topology down stops exactly what up started', async (t) => {
      const down = runScript('down.ts', folder);
      t.comment(down.stdout.trimEnd());
      t.equal(down.status, 0, 'exits 0');
      const stillThere = state.processes.filter(
        (record) => isAlive(record.pid) && startTimeOf(record.pid) === record.startTime,
      );
      t.same(stillThere, [], 'none of its processes runs any more');
      const again = runScript('status.ts', folder);
      t.equal(again.status, 3, 'status then says nothing runs (exit 3)');
      t.notOk(existsSync(folder), 'down removes the topology folder');
      t.same(socketFolders.filter(existsSync), [], `and the admin sockets' folders (${socketFolders.join(', ')})`);
    });
  },
);
