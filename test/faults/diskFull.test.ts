import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startServer } from '../helpers/server.js';
import { call, createPet, listAll, serve, waitFor, type Answer } from './harness.js';

const megabyte = 1024 * 1024;

/** A 80 MB tmpfs to fill, or why there cannot be one here. */
function mountSmallDisk(): { path: string; unmount(): void } | string {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const path = mkdtempSync(join(tmpdir(), 'pets-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=80m', 'tmpfs', path], { stdio: 'pipe' });
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    return `cannot mount a tmpfs here: ${(error as Error).message.split('\n', 1)[0] ?? ''}`;
  }
  return {
    path,
    unmount() {
      execFileSync('umount', [path], { stdio: 'pipe' });
      rmSync(path, { recursive: true, force: true });
    },
  };
}

const disk = mountSmallDisk();
if (typeof disk === 'string') t.comment(`disk-full test skipped: ${disk}`);

t.test(
  'embedded database on a disk that fills: 503 Error objects, /readyz 503, /healthz and shutdown work, nothing acknowledged is lost',
  { skip: typeof disk === 'string' ? disk : false },
  async (t) => {
    if (typeof disk === 'string') return;
    t.teardown(() => {
      disk.unmount();
    });
    const dataDir = join(disk.path, 'data');
    const env = { DATA_DIR: dataDir, SHUTDOWN_TIMEOUT_MS: '3000' };
    const server = await serve(t, env);
    const acknowledged = new Set<number>();
    const answers: Answer[] = [];
    let writing = true;
    const writer = async (id: number) => {
      for (let n = 0; writing && n < 100_000; n += 1) {
        const answer = await createPet(server.api, `d${id}-${n}`);
        answers.push(answer);
        if (answer.status === 201 && typeof answer.body.id === 'number') acknowledged.add(answer.body.id);
      }
    };
    const writers = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(writer);
    await waitFor('pets written', 30_000, () => Promise.resolve(acknowledged.size >= 50));

    // Another process fills the disk, leaving less than the embedded database's 24 MB floor.
    const free = statfsSync(disk.path).bavail * statfsSync(disk.path).bsize;
    writeFileSync(join(disk.path, 'filler'), Buffer.alloc(Math.max(0, free - 6 * megabyte)));
    await waitFor('a 503', 10_000, () => Promise.resolve(answers.some((answer) => answer.status === 503)));
    t.match(await call(`${server.address}/readyz`), {
      status: 503,
      body: { code: 'service_unavailable', status: 503 },
    });
    t.equal((await call(`${server.address}/healthz`)).status, 200, '/healthz still answers');
    writing = false;
    await Promise.all(writers);
    const other = answers.filter(
      (answer) => answer.status !== 201 && !(answer.status === 503 && answer.body.code === 'service_unavailable'),
    );
    t.same(other.slice(0, 5), [], 'every write answered 201 or a 503 Error object');

    const started = Date.now();
    await server.shutdown('SIGTERM');
    t.ok(Date.now() - started < 10_000, `shut down in ${Date.now() - started} ms`);

    const refused = await startServer({ LOG_LEVEL: 'silent', PORT: '0', ...env }, {
      write: () => true,
    } as unknown as NodeJS.WritableStream).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    t.match(
      refused?.message,
      /^The embedded database cannot start: the disk of .* is full/,
      'a start on the full disk says so',
    );
    t.notMatch(refused?.message, /\n/, 'in one line');

    rmSync(join(disk.path, 'filler'));
    const again = await serve(t, env);
    const ids = (await listAll(again.api)).map((pet) => pet.id);
    t.equal(new Set(ids).size, ids.length, 'paging shows no pet twice');
    t.same(
      [...acknowledged].filter((id) => !ids.includes(id)),
      [],
      `all ${acknowledged.size} acknowledged pets are there once space is freed`,
    );
    t.equal((await createPet(again.api, 'after')).status, 201, 'writes work again');
    await again.shutdown('SIGTERM');
  },
);
