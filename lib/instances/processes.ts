import { execFile, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Processes started by this library: each one is spawned with its output in
 * a log file, known by pid, and stopped by pid. Nothing here finds a process
 * by name, so nothing else on the machine is touched.
 */

export interface Account {
  uid: number;
  gid: number;
  name: string;
}

/** The `postgres` account when running as root (PostgreSQL and PgBouncer refuse root), else undefined: run as ourselves. */
export function serviceAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid) || uid === 0) {
    throw new Error(
      'running as root, but there is no `postgres` account to run PostgreSQL and PgBouncer as (install postgresql-15)',
    );
  }
  return { uid, gid, name: 'postgres' };
}

/**
 * A new folder that the given account owns (mkdtemp under `parent`, or the
 * system temporary folder). Readable by all (mode 755), so that processes of
 * another account can reach the folders nested in it.
 */
export function ownedFolder(prefix: string, account: Account | undefined, parent = tmpdir()): string {
  mkdirSync(parent, { recursive: true });
  const path = mkdtempSync(join(parent, prefix));
  chmodSync(path, 0o755);
  if (account) chownSync(path, account.uid, account.gid);
  return path;
}

/**
 * The longest Unix socket path we create. The kernel's limit is 107 bytes
 * (sun_path, less its NUL); HAProxy's is 97. A checkout at a CI workspace path
 * (/home/runner/work/<repo>/<repo>/...) with our nested folders is past both.
 */
const socketPathLimit = 97;
/** The longest file name we place in a socket folder ("admin.sock"). */
const socketNameAllowance = 16;

/**
 * A new private folder (mode 700) for Unix sockets, short enough for any
 * socket name up to 16 characters wherever the checkout is: under the system
 * temporary folder when that path is short, else under /tmp.
 */
export function socketFolder(prefix: string): string {
  const shortEnough = (parent: string) => parent.length + prefix.length + 8 + socketNameAllowance <= socketPathLimit;
  const parent = shortEnough(tmpdir()) ? tmpdir() : '/tmp';
  const path = mkdtempSync(join(parent, prefix));
  chmodSync(path, 0o700);
  return path;
}

/** The last `count` lines of a log file, for error messages; empty when it is missing. */
export function lastLines(path: string, count = 20): string {
  if (!existsSync(path)) return '';
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
  return lines.slice(-count).join('\n');
}

/**
 * The fields of /proc/<pid>/stat from field 3 (the state) on, or undefined
 * when the process is gone. Field 2, the command name, may hold spaces, so
 * the fields are counted from its closing ')': index i is field i + 3.
 */
export function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** True while the pid names a live process (a zombie counts as dead). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // The state (field 3): Z is a zombie, X is dead.
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/**
 * When the process started (clock ticks since boot, /proc/<pid>/stat field
 * 22), or undefined when it is gone. A pid with another start time is
 * another process: a state file keeps both, so a stale pid is never signalled.
 */
export function startTimeOf(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields === undefined ? undefined : Number(fields[19]);
}

/** The parent (field 4) of every live process, from one pass over /proc. */
function parentPids(): Map<number, number> {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields) parentOf.set(Number(entry), Number(fields[1]));
  }
  return parentOf;
}

/** Pids whose parent is `pid` (from /proc), e.g. a postmaster's backends. */
export function childPids(pid: number): number[] {
  return [...parentPids()].filter(([, parent]) => parent === pid).map(([child]) => child);
}

/**
 * The process and every live descendant (children, their children...), the
 * root first: a manager's postmaster and its backends, a cluster's workers.
 */
export function processTree(root: number): number[] {
  const parentOf = parentPids();
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, parent] of parentOf) if (parent === tree[i]) tree.push(pid);
  }
  return tree;
}

/** Pids to SIGKILL if this Node.js process exits with them still running (set `persistent` to keep a process). */
const killOnExit = new Set<number>();
let exitHookInstalled = false;

function killOnExitOf(pid: number): void {
  killOnExit.add(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const tracked of killOnExit) {
      try {
        process.kill(tracked, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
}

export interface SpawnOptions {
  command: string;
  args: string[];
  /** Output (stdout and stderr) is appended here. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run as this account (see serviceAccount). */
  account?: Account | undefined;
  /** Outlives this Node.js process (own process group, not killed on exit): for `npm run topology -- up`. */
  persistent?: boolean;
}

/** Starts a process with its output in `logFile`; returns its pid. */
export function spawnLogged(options: SpawnOptions): number {
  const log = openSync(options.logFile, 'a');
  if (options.account) chownSync(options.logFile, options.account.uid, options.account.gid);
  try {
    const child = spawn(options.command, options.args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', log, log],
      detached: options.persistent === true,
      ...(options.account ? { uid: options.account.uid, gid: options.account.gid } : {}),
    });
    if (child.pid === undefined) throw new Error(`could not start ${options.command}`);
    // Without a listener, a failed exec would be an uncaught 'error' event.
    child.on('error', () => undefined);
    if (options.persistent) child.unref();
    else killOnExitOf(child.pid);
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/** Forget a pid for the exit hook (it was stopped, or handed over to a state file). */
export function untrack(pid: number): void {
  killOnExit.delete(pid);
}

export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Waits until the pid is gone; false when it still runs after `timeoutMs`. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * Sends `how` to the pid and waits for it to end; after `timeoutMs` it is
 * killed with SIGKILL. Returns true when it ended by itself.
 */
export async function stopPid(pid: number, how: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<boolean> {
  signal(pid, how);
  const ended = await waitForExit(pid, timeoutMs);
  if (!ended) {
    signal(pid, 'SIGKILL');
    await waitForExit(pid, 5_000);
  }
  untrack(pid);
  return ended;
}

export interface WaitOptions {
  /** What is awaited, for the error message ("PostgreSQL on 127.0.0.1:5500"). */
  what: string;
  timeoutMs: number;
  /** Fail at once when this process ends. */
  pid?: number;
  /** Its last lines go into the error. */
  logFile?: string;
  intervalMs?: number;
}

/**
 * Calls `probe` until it resolves to a value (not undefined) and returns it.
 * A probe may throw: the last error is reported if time runs out.
 */
export async function waitUntil<T>(options: WaitOptions, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastProblem = 'not ready';
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    const ended = options.pid !== undefined && !isAlive(options.pid);
    if (ended || Date.now() > deadline) {
      const why = ended ? `the process (pid ${options.pid}) ended` : `not ready after ${options.timeoutMs} ms`;
      const log = options.logFile ? lastLines(options.logFile) : '';
      throw new Error(
        `${options.what}: ${why} (last: ${lastProblem})${log ? `\n--- last lines of ${options.logFile} ---\n${log}` : ''}`,
      );
    }
    await sleep(options.intervalMs ?? 100);
  }
}

/** Runs a command to completion (as `account` if given); throws with its output when it fails. */
export function runChecked(
  command: string,
  args: string[],
  options: { account?: Account | undefined; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): string {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    cwd: options.cwd,
    env: options.env ?? process.env,
    timeout: options.timeoutMs ?? 120_000,
    ...(options.account ? { uid: options.account.uid, gid: options.account.gid } : {}),
  });
  if (result.error) throw new Error(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited with ${result.status ?? result.signal}:\n${`${result.stdout}\n${result.stderr}`.trim()}`,
    );
  }
  return result.stdout;
}

/**
 * runChecked without blocking: the event loop keeps running while the
 * command does, so clients in this process (a drill's) go on sending and
 * timing their requests. runChecked's spawnSync froze them for the whole
 * of a `pg_autoctl perform switchover`, which the drill then counted as
 * write gap.
 */
export function runCheckedAsync(
  command: string,
  args: string[],
  options: { account?: Account | undefined; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        encoding: 'utf8',
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? 120_000,
        ...(options.account ? { uid: options.account.uid, gid: options.account.gid } : {}),
      },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`${command} ${args.join(' ')}: ${error.message}\n${`${stdout}\n${stderr}`.trim()}`));
        else resolve(stdout);
      },
    );
  });
}
