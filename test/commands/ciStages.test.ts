import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { isAlive, waitUntil } from '../../lib/instances/index.js';
import { repoRoot } from '../../lib/repoRoot.js';

// CI's machinery (scripts/ci-stages.sh, sourced by .ci/run): stages, the background work they wait for, the
// processes a stage leaves running; and the prefetched tarballs scripts/ci-node-and-service.sh takes.

/** A stage's row in the table: its name, wall time and CPU time, then RESULT (a regular expression's source). */
const stageRow = (name: string, result: string) => new RegExp(`${name}\\s+0:\\d\\d\\s+\\d+:\\d\\d {2}${result}`);

/** Runs a bash script after sourcing CI's stage functions, in the repository; never throws. */
function ci(script: string, env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(
    'bash',
    ['-c', `set -euo pipefail\ntarget_s=1800\nbudget_s=5100\n. scripts/ci-stages.sh\n${script}`],
    { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 },
  );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

t.test('a stage waits for the background work it needs, and fails without running when that work failed', async (t) => {
  const { status, output } = ci(`
background "fetched" bash -c 'echo fetched it'
background "broken" bash -c 'echo could not fetch; exit 3'
background "unneeded" bash -c 'echo nobody waited'
stage "uses fetched" needs "fetched" echo "ran with fetched"
stage "uses fetched again" needs "fetched" echo "ran again"
stage "uses broken" needs "broken" echo "ran with broken"
report
echo "overall=$overall"
`);
  t.match(output, /fetched it\nran with fetched\n/, "the work's output, then the stage's command");
  t.equal(output.match(/fetched it/g)?.length, 1, 'work waited for twice is printed once');
  t.notMatch(output, /ran with broken/, 'a stage whose work failed does not run its command');
  t.match(output, /could not fetch/, "the failed work's output is printed");
  t.match(output, stageRow('uses broken', 'FAILED \\(1\\)'), 'and its stage fails');
  t.match(output, /nobody waited/, 'work no stage needed is waited for at the end');
  const background = output.slice(output.indexOf('in the background'));
  for (const [name, result] of [
    ['fetched', 'ok'],
    ['broken', 'FAILED \\(3\\)'],
    ['unneeded', 'ok'],
  ] as const) {
    t.match(background, new RegExp(`${name}\\s+0:\\d\\d {2}${result}`), `${name}: a row under the total`);
  }
  t.match(output, /total\s+0:\d\d[\s\S]*in the background/, 'the background rows come after the total');
  t.match(output, /overall=1/, 'the run fails');
  t.equal(status, 0);
});

t.test(
  "lanes run at once; their rows, tests and failures join the run's, and they share background work",
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'pets-ci-lanes-'));
    t.teardown(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    // Each of the first two stages waits for a file the other makes: they end only when both run at once.
    const { output } = ci(`
background "fetched" bash -c 'echo fetched it'
lane_a() {
  stage "waits for b" bash -c 'touch ${dir}/a; until [ -e ${dir}/b ]; do sleep 0.05; done; echo a saw b'
  stage "needs fetched" needs "fetched" echo "ran with fetched"
}
lane_b() {
  stage "waits for a" bash -c 'touch ${dir}/b; until [ -e ${dir}/a ]; do sleep 0.05; done; echo b saw a'
  stage "fails" false
  stage "counts" counted "inner" printf '# { total: 3, pass: 2, fail: 1, skip: 0 }\\n'
}
stage "before" true
lanes "a" lane_a "b" lane_b
stage "after" needs "fetched" echo "ran after"
report
echo "overall=$overall"
`);
    t.match(output, /\[a\] a saw b\n/, "each lane's lines are led by its name");
    t.match(output, /\[b\] b saw a\n/, 'and the lanes ran at once');
    for (const [name, result] of [
      ['before', 'ok'],
      ['a: waits for b', 'ok'],
      ['a: needs fetched', 'ok'],
      ['b: fails', 'FAILED \\(1\\)'],
      ['b: counts', 'ok'],
      ['after', 'ok'],
    ] as const) {
      t.match(output, stageRow(name, result), `${name}: its row in the table`);
    }
    t.match(output, /\[a\] ran with fetched/, "a lane waits for the run's background work");
    t.equal(output.match(/fetched it/g)?.length, 1, 'whose output is printed once, by the first to wait');
    t.match(output, /ran after/);
    t.match(output, /\n2 passed, 1 failed, 0 skipped/, "a lane's tests are added to the run's");
    t.match(output, /overall=1/, 'a failed stage in a lane fails the run');
  },
);

t.test("a stage's row has the CPU time of what it ran, on every core", async (t) => {
  // Each process spins until it has used 1 s of CPU itself (asking once per million turns, so the asking costs
  // little): at least that much on a fast machine or a busy one.
  const spin = `node -e 'for (let i = 1; i % 1e6 || process.cpuUsage().user < 1e6; i++);'`;
  const { output } = ci(`
stage "spins twice" bash -c "${spin} & ${spin}; wait"
stage "sleeps" sleep 1
report
`);
  const cpu = (name: string) => {
    const row = new RegExp(`${name}\\s+\\d+:\\d\\d\\s+(\\d+):(\\d\\d) {2}ok`).exec(output);
    return row ? Number(row[1]) * 60 + Number(row[2]) : Number.NaN;
  };
  t.ok(cpu('spins twice') >= 2, `two processes of 1 s each: ${cpu('spins twice')} s`);
  t.equal(cpu('sleeps'), 0, 'a stage that waits uses none');
  const total = /\ntotal\s+\d+:\d\d\s+(\d+):(\d\d) {2}target/.exec(output);
  const rows = cpu('spins twice') + cpu('sleeps');
  // Each row and the total are whole seconds, cut down: the total may be a second above its rows' sum.
  t.ok(total && [rows, rows + 1].includes(Number(total[1]) * 60 + Number(total[2])), 'the total adds them up');
});

t.test(
  'what a stage leaves running is ended and counted in its row; a process started without the mark stays',
  async (t) => {
    // The service is started, as a stage starts one, before the stage returns: until the child has become sleep,
    // it is a fork of the stage's shell and still carries the mark (on a busy machine, CI saw it ended as left).
    const { output } = ci(`
stage "leaves one" bash -c 'setsid sleep 600 >/dev/null 2>&1 & echo "marked=$!"'
stage "starts a service" bash -c 'env -u PETS_CI_STAGE setsid sleep 600 >/dev/null 2>&1 & until [ "$(cat /proc/$!/comm 2>/dev/null)" = sleep ]; do sleep 0.01; done; echo "unmarked=$!"'
stage "clean" true
report
`);
    const marked = Number(/marked=(\d+)/.exec(output)?.[1]);
    const unmarked = Number(/unmarked=(\d+)/.exec(output)?.[1]);
    t.teardown(() => {
      for (const pid of [marked, unmarked]) if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
    });
    t.match(output, stageRow('leaves one', 'ok; 1 processes it left running, ended'), "the stage's row counts it");
    t.match(output, new RegExp(`left running by this stage, now ended:[\\s\\S]*\\n\\s*${marked}\\s`), 'and lists it');
    t.match(output, stageRow('starts a service', 'ok\n'), 'a process without the mark is not counted');
    t.match(output, stageRow('clean', 'ok\n'));
    // SIGTERM ends a sleep at once: the ceiling is for a busy machine.
    await waitUntil({ what: 'the process left running to end', timeoutMs: 10_000 }, async () =>
      isAlive(marked) ? undefined : true,
    );
    t.notOk(isAlive(marked), 'the process left running got SIGTERM and ended');
    t.ok(isAlive(unmarked), 'the one started without the mark still runs');
  },
);

t.test(
  'a pinned tarball is taken from PETS_NODE_TARBALLS, and refused there too when it does not hash to its pin',
  async (t) => {
    const folder = mkdtempSync(join(tmpdir(), 'pets-ci-tarballs-'));
    t.teardown(() => {
      rmSync(folder, { recursive: true, force: true });
    });
    const bytes = Buffer.from('not really a tarball');
    writeFileSync(join(folder, 'pets-no-such-package-1.0.0.tgz'), bytes);
    const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
    const pinned = (pin: string) =>
      spawnSync(
        'bash',
        [
          '-c',
          `fail() { echo "FAILED: $*" >&2; exit 1; }; work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
. scripts/ci-node-and-service.sh; pinned_tarball pets-no-such-package 1.0.0 '${pin}'`,
        ],
        { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, PETS_NODE_TARBALLS: folder }, timeout: 120_000 },
      );
    const taken = pinned(integrity);
    t.equal(taken.status, 0, taken.stderr);
    t.equal(taken.stdout.trim(), join(folder, 'pets-no-such-package-1.0.0.tgz'), "the prefetched file's path");
    const otherPin = `sha512-${createHash('sha512').update('other bytes').digest('base64')}`;
    const refused = pinned(otherPin);
    t.not(refused.status, 0, 'a prefetched file that does not hash to the pin is refused');
    t.match(refused.stderr, /pets-no-such-package@1\.0\.0 hashes to sha512-\S+, not the pinned/);
  },
);

t.test("the failed tests are listed again at the end, a nested run's among them", async (t) => {
  const tap = [
    'TAP version 14',
    '# Subtest: suite',
    '    # the inner npm test failed:',
    '    #     not ok 3 - test/inner/file.test.ts # time=12ms',
    '    not ok 1 - the inner npm test',
    'not ok 1 - suite',
    '# { total: 3, pass: 1, fail: 2, skip: 0 }',
  ].join('\n');
  const dir = mkdtempSync(join(tmpdir(), 'pets-ci-failed-'));
  t.teardown(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(join(dir, 'tap.txt'), `${tap}\n`);
  const { output } = ci(`counted "outer" cat ${join(dir, 'tap.txt')} || true\nreport\n`);
  const failed = output.slice(output.indexOf('== failed tests'));
  t.match(failed, /\[outer\]\s+#\s+not ok 3 - test\/inner\/file\.test\.ts/, "the nested run's failed file");
  t.match(failed, /\[outer\]\s+not ok 1 - the inner npm test/, 'the outer assertion');
  t.match(output, /outer: 1 passed, 2 failed, 0 skipped/, 'the summary is added up');
});
