import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '../../lib/repoRoot.js';

/**
 * A throwaway git clone of this repository with this working tree committed
 * on top (so the tools under test are the ones being edited), sharing
 * node_modules: a place to commit a migration and run the gate on it.
 */

export interface RepoCopy {
  root: string;
  /** Runs a command in the copy; never throws. */
  run(command: string, args: string[]): { status: number | null; output: string };
  git(...args: string[]): string;
  /** Writes a file (relative path) and commits it. */
  commit(path: string, text: string, message: string): void;
  remove(): void;
}

/**
 * What a command run in the copy may print. spawnSync's default (1 MiB) ends a command that prints more, and
 * reports it only as a null status: npm test in a copy prints 0.23 MiB when it passes (the spec-driven set of
 * this tree), 2.9 MiB on the worked examples' tree while an assertion's name carried a photo's bytes, more
 * with a failing file's diagnostics. A command must fail for what it found, never for how much it said.
 */
const outputLimitBytes = 256 * 1024 * 1024;

export function copyOfRepo(): RepoCopy {
  const root = mkdtempSync(join(tmpdir(), 'pets-repo-copy-'));
  const run = (command: string, args: string[], cwd = root) => {
    const result = spawnSync(command, args, {
      cwd,
      encoding: 'utf8',
      timeout: 20 * 60_000,
      maxBuffer: outputLimitBytes,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'test',
        GIT_AUTHOR_EMAIL: 't@example.com',
        GIT_COMMITTER_NAME: 'test',
        GIT_COMMITTER_EMAIL: 't@example.com',
      },
    });
    // A command that could not run, or was ended (its timeout, or output past the limit), says so.
    const ended = result.error === undefined ? '' : `\n${[command, ...args].join(' ')}: ${result.error.message}`;
    return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}${ended}` };
  };
  const git = (...args: string[]) => {
    const result = run('git', args);
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.output}`);
    return result.output.trim();
  };
  git('clone', '--quiet', '--shared', repoRoot, '.');
  // This tree as it is, uncommitted edits and new files included.
  const listed = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], repoRoot).output;
  for (const file of listed.split('\0').filter(Boolean)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    try {
      cpSync(join(repoRoot, file), join(root, file));
    } catch {
      rmSync(join(root, file), { force: true });
    }
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  // .gitignore's node_modules/ matches a folder, not this link.
  appendFileSync(join(root, '.git', 'info', 'exclude'), '/node_modules\n');
  git('add', '-A');
  if (run('git', ['diff', '--cached', '--quiet']).status !== 0) git('commit', '--quiet', '-m', 'the tree under test');
  return {
    root,
    run: (command, args) => run(command, args),
    git,
    commit(path, text, message) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
      git('add', path);
      git('commit', '--quiet', '-m', message);
    },
    remove: () => {
      rmSync(root, { recursive: true, force: true });
    },
  };
}
