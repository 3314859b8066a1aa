import t from 'tap';
import { copyOfRepo } from './repoCopy.js';

// The copy the system suites run tools in (the worked examples' npm test among them) keeps what a command
// prints, however much: a verbose run is judged by its status, not ended by a buffer.
t.test('a command in a copy may print more than spawnSync keeps by default (1 MiB)', async (t) => {
  const copy = copyOfRepo();
  t.teardown(copy.remove);
  const bytes = 3 * 1024 * 1024;
  const result = copy.run('node', ['-e', `process.stdout.write('x'.repeat(${bytes}))`]);
  t.equal(result.status, 0, 'it ends on its own, with its status');
  t.equal(result.output.length, bytes, 'and everything it printed is kept');
  const missing = copy.run('a-command-that-does-not-exist', []);
  t.match(
    missing.output,
    /a-command-that-does-not-exist: spawnSync a-command-that-does-not-exist ENOENT$/,
    'a command that could not run says why',
  );
});
