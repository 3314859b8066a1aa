import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Writable } from 'node:stream';
import { repoRoot } from '../../lib/repoRoot.js';

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * V8 flags for every test process (package.json's tap node-arg) and every
 * process a test spawns: --liftoff-only keeps PGlite's 9 MB of WebAssembly on
 * the baseline compiler. A test process lives seconds, too short for the
 * optimizing tier to pay back compiling it: about 1 s of CPU per process
 * that opens an embedded database (measured with /usr/bin/time).
 */
export const testNodeFlags = ['--liftoff-only'];

/**
 * What every server a test starts (a process or startServer, test/helpers/server.ts) runs with: no load
 * shedding, which a busy test machine's late event loop would trigger. Only
 * test/scaling/loadShedding.test.ts sheds, at its own threshold.
 */
export const testServerEnv = { LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' };

/** Runs a TypeScript entry point of src/ the way the npm scripts do, with tsx. */
export function spawnEntry(entry: string, args: string[], env: Record<string, string>): ChildProcessWithoutNullStreams {
  const cleanEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'BOOTSTRAP_API_KEY', 'PORT', 'HOST', 'MIGRATE_ON_START'])
    delete cleanEnv[name];
  return spawn(process.execPath, ['--import', 'tsx', ...testNodeFlags, entry, ...args], {
    cwd: repoRoot,
    // A free metrics port each (several servers run at once); no drain delay unless a test asks for one.
    env: { ...cleanEnv, ...testServerEnv, LOG_LEVEL: 'info', METRICS_PORT: '0', DRAIN_DELAY_MS: '0', ...env },
  });
}

export function finished(child: ChildProcessWithoutNullStreams): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    }),
  );
}

export function runEntry(entry: string, args: string[], env: Record<string, string>): Promise<Finished> {
  return finished(spawnEntry(entry, args, env));
}

/** Resolves with the output so far once a line matches, or rejects when the process ends first. */
export function waitForOutput(child: ChildProcessWithoutNullStreams, pattern: RegExp): Promise<RegExpExecArray> {
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match) {
        child.stdout.off('data', onData);
        child.stderr.off('data', onData);
        resolve(match);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code) => {
      reject(new Error(`process exited with ${code} before printing ${pattern}:\n${output}`));
    });
  });
}

/** A stream that keeps what is written to it, for calling a CLI's run function in-process. */
export function textSink(): { stream: NodeJS.WritableStream; text(): string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** Calls a CLI's run function in-process (far cheaper than spawning tsx) and keeps its output. */
export async function runInProcess(
  run: (streams: { out: NodeJS.WritableStream; err: NodeJS.WritableStream }) => Promise<number>,
): Promise<Finished> {
  const out = textSink();
  const err = textSink();
  const code = await run({ out: out.stream, err: err.stream });
  return { code, stdout: out.text(), stderr: err.text() };
}
