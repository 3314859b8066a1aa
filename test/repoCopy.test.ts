import t from 'tap';
import { runIn } from './helpers/repoCopy.js';

t.test(
  "a command run in a copy may print more than spawnSync's default 1 MiB: its status and output are whole",
  async (t) => {
    const bytes = 3 * 1024 * 1024;
    const printing = `process.stdout.write('x'.repeat(${bytes})); process.stderr.write('end')`;
    const result = runIn(process.cwd(), process.execPath, ['-e', printing]);
    t.equal(result.status, 0, 'the command ran to its end');
    t.equal(result.output.length, bytes + 'end'.length, 'all it printed, stderr after stdout');
  },
);

t.test('a command that cannot run says why in its output', async (t) => {
  const result = runIn(process.cwd(), 'no-such-command-here', []);
  t.equal(result.status, null);
  t.match(result.output, /no-such-command-here: .*ENOENT/);
});
