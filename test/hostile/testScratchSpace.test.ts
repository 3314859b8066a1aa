import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { privateFolderIn } from '../helpers/scratchSpace.js';
import { otherUser } from './otherUser.js';

// The tests' own scratch space sits in folders every user can write to
// (/dev/shm, /tmp), and the embedded templates there have names anyone can
// predict: another user who made them first would choose what every
// embedded test database starts from. So they live in a folder of this
// user's alone, checked before it is used.
const uid = process.getuid?.() ?? 0;

function sharedFolder(t: Test): string {
  const shared = mkdtempSync(join(tmpdir(), 'pets-shared-'));
  chmodSync(shared, 0o1777);
  t.teardown(() => {
    rmSync(shared, { recursive: true, force: true });
  });
  return shared;
}

t.test('the scratch folder is made owner-only', async (t) => {
  const shared = sharedFolder(t);
  const before = process.umask(0o022);
  t.teardown(() => {
    process.umask(before);
  });
  const folder = privateFolderIn(shared);
  const stats = lstatSync(folder);
  t.equal(stats.mode & 0o777, 0o700);
  t.equal(stats.uid, uid);
  t.equal(privateFolderIn(shared), folder, 'and used again as it is');
});

t.test('a folder others can enter is refused', async (t) => {
  const shared = sharedFolder(t);
  const made = join(shared, `pets-test-${uid}`);
  mkdirSync(made);
  chmodSync(made, 0o777);
  t.throws(() => privateFolderIn(shared), { message: /must be a folder only uid \d+ can use.*mode 777/ });
});

t.test('a symbolic link in its place is refused, even to a folder of ours', async (t) => {
  const shared = sharedFolder(t);
  const target = join(shared, 'elsewhere');
  mkdirSync(target, { mode: 0o700 });
  symlinkSync(target, join(shared, `pets-test-${uid}`));
  t.throws(() => privateFolderIn(shared), { message: /is a symbolic link/ });
});

const other = otherUser();
t.test('a folder another user made first is refused', 'skip' in other ? { skip: other.skip } : {}, async (t) => {
  if ('skip' in other) return;
  const shared = sharedFolder(t);
  const made = join(shared, `pets-test-${uid}`);
  mkdirSync(made, { mode: 0o700 });
  chownSync(made, other.uid, other.uid);
  t.throws(() => privateFolderIn(shared), { message: new RegExp(`owned by uid ${other.uid}`) });
});
