import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { generateApiKey } from '../src/auth/keys.js';
import { DataDirLockedError, lockDataDir } from '../src/db/dataDirLock.js';
import { migratedDataDir } from './helpers/databases.js';
import { scratchDir } from './helpers/scratchSpace.js';
import { testServerEnv } from './helpers/processes.js';
import { repoRoot } from '../lib/repoRoot.js';

/** Another process that takes the lock on dir and holds it until killed. */
async function holdInAnotherProcess(dir: string): Promise<ChildProcess> {
  const script = `import { lockDataDir } from './src/db/dataDirLock.ts';
await lockDataDir(process.argv[1]);
process.stdout.write('locked\\n');
setInterval(() => {}, 60_000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  if (!chunk.toString().includes('locked')) throw new Error(`the holder said: ${chunk.toString()}`);
  return child;
}

t.test('a second live process is refused; once it dies, with SIGKILL, the lock is free', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const holder = await holdInAnotherProcess(dir.path);
  t.teardown(() => holder.kill('SIGKILL'));
  await t.rejects(
    lockDataDir(dir.path),
    new DataDirLockedError(
      `The embedded database in ${dir.path} is in use by process ${holder.pid} (is \`npm start\` running?). ` +
        'Stop that process first, or point DATABASE_URL at a PostgreSQL server.',
    ),
  );
  holder.kill('SIGKILL');
  await once(holder, 'exit');
  const lock = await lockDataDir(dir.path);
  t.pass('taken once the holder is killed: the kernel released its lock');
  lock.release();
});

t.test('a recorded pid that now names a live, unrelated process does not block', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  // PID 1 (in a container, every start's own pid) and the test runner: both alive.
  for (const pid of [1, process.ppid]) {
    writeFileSync(join(dir.path, 'pets.lock'), `${pid}\n`);
    const lock = await lockDataDir(dir.path);
    t.equal(readFileSync(join(dir.path, 'pets.lock'), 'utf8'), `${process.pid}\n`, `taken over from pid ${pid}`);
    lock.release();
  }
});

t.test('the same process cannot open a data directory twice; release frees it', async (t) => {
  const dir = scratchDir();
  t.teardown(dir.remove);
  const first = await lockDataDir(dir.path);
  await t.rejects(lockDataDir(dir.path), {
    name: 'DataDirLockedError',
    message: `The embedded database in ${dir.path} is already open in this process.`,
  });
  first.release();
  first.release();
  const again = await lockDataDir(dir.path);
  t.pass('taken again after release');
  again.release();
});

/** Runs `node dist/server.js` as PID 1 of a new PID namespace, as a container does. */
function startAsPid1(dataDir: string): ChildProcess {
  return spawn('unshare', ['-pf', '--mount-proc', process.execPath, 'dist/server.js'], {
    cwd: repoRoot,
    env: {
      PATH: process.env['PATH'] ?? '',
      ...testServerEnv,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: 'off',
      DRAIN_DELAY_MS: '0',
      BOOTSTRAP_API_KEY: generateApiKey(),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function outputOf(child: ChildProcess): { until(pattern: RegExp): Promise<string> } {
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    until: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(output)) resolve(output);
        };
        child.stdout!.on('data', check);
        child.stderr!.on('data', check);
        child.on('exit', (code) => {
          reject(new Error(`exited with ${code} before printing ${pattern}:\n${output}`));
        });
        check();
      }),
  };
}

/** The pid (in this namespace) of the node that unshare started: its only child. */
function childOf(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  if (children.length !== 1 || !(children[0]! > 0))
    throw new Error(`unshare ${pid} has children ${children.join(',')}`);
  return children[0]!;
}

/** Kills a namespace left running by a failed test: its PID 1 first (killing unshare alone leaves it). */
function stopNamespace(unshare: ChildProcess): void {
  if (unshare.exitCode !== null || unshare.signalCode !== null) return;
  try {
    process.kill(childOf(unshare.pid!), 'SIGKILL');
  } catch {
    // Already gone.
  }
  unshare.kill('SIGKILL');
}

const pidNamespaceSkip = (() => {
  if (!existsSync(join(repoRoot, 'dist/server.js'))) return 'dist/server.js is not built (npm run build)';
  const probe = spawnSync('unshare', ['-pf', '--mount-proc', 'true'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return 'unshare -pf is not permitted here (needs CAP_SYS_ADMIN)';
  return undefined;
})();

t.test(
  'in a container (node as PID 1), a start after kill -9 is not refused',
  pidNamespaceSkip ? { skip: pidNamespaceSkip } : {},
  async (t) => {
    const dir = await migratedDataDir();
    t.teardown(dir.remove);
    const first = startAsPid1(dir.path);
    t.teardown(() => {
      stopNamespace(first);
    });
    await outputOf(first).until(/serving http/);
    t.equal(readFileSync(join(dir.path, 'pets.lock'), 'utf8'), '1\n', 'the server ran as PID 1');
    process.kill(childOf(first.pid!), 'SIGKILL');
    await once(first, 'exit');

    const second = startAsPid1(dir.path);
    t.teardown(() => {
      stopNamespace(second);
    });
    const output = await outputOf(second).until(/serving http/);
    t.notMatch(output, /already open|in use by/, 'the second start is not refused');
    t.pass('the restarted PID 1 serves');
    process.kill(childOf(second.pid!), 'SIGTERM');
    await once(second, 'exit');
  },
);
