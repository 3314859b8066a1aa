import { spawnSync } from 'node:child_process';

/** A local account that is not the one running the tests: made once, kept (other test processes may use it). */
const otherUserName = 'pets-test-other';

/**
 * The uid of another local user, made with useradd when running as root;
 * else a reason to skip: only root can give a file to another user.
 */
export function otherUser(): { uid: number } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'only root can give a file to another user (run the tests as root)' };
  const lookUp = () => spawnSync('id', ['-u', otherUserName], { encoding: 'utf8' });
  let found = lookUp();
  if (found.status !== 0) {
    // Another test process may make it at the same moment: look again rather than trust useradd's status.
    spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', otherUserName]);
    found = lookUp();
  }
  const uid = Number(found.stdout.trim());
  return found.status === 0 && uid > 0 ? { uid } : { skip: `useradd ${otherUserName} failed: ${found.stderr}` };
}
