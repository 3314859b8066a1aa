import { execFile } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { Test } from 'tap';
import { waitUntil } from '../../lib/instances/index.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { basePath, loadContract } from '../../lib/conformance/spec.js';
import { checkGeneratedRequests } from '../conformance/overHttp.js';

/**
 * Drives the image that `npm run image` built (npm run test:system -- image passes its
 * reference in PET_STORE_IMAGE) with Podman, as an operator runs it: published
 * ports on 127.0.0.1 (Podman picks free host ports), a named volume for the
 * data, every container and volume removed when its test ends.
 */

export const imageRef = process.env['PET_STORE_IMAGE'] ?? '';

/** The image's API and metrics ports (Dockerfile: PORT, METRICS_PORT, EXPOSE). */
export const apiPort = 3000;
export const metricsPort = 9464;

/**
 * The conformance requests and npm run verify all come from one address: a
 * quota above what they send, so that verify never waits out a rate-limit window.
 */
export const generousRateLimit = { RATE_LIMIT_MAX: '100000' };

const podmanEnv = { ...process.env, CONTAINERS_CONF: join(repoRoot, 'scripts', 'image', 'containers.conf') };

export interface CommandResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs podman with this repository's containers.conf; never throws. */
export function podman(args: string[], timeoutMs = 120_000): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      'podman',
      args,
      { env: podmanEnv, timeout: timeoutMs, maxBuffer: 64 << 20, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error?.killed)
          resolve({ status: -1, stdout, stderr: `${stderr}\n(killed: no end within ${timeoutMs} ms)` });
        else resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Runs podman and returns its trimmed stdout; throws with its stderr when it fails. */
export async function podmanOk(args: string[], timeoutMs?: number): Promise<string> {
  const result = await podman(args, timeoutMs);
  if (result.status !== 0) throw new Error(`podman ${args.join(' ')} exited ${result.status}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

let created = 0;

/** A container or volume name no other test (or engineer) uses. */
export function uniqueName(what: string): string {
  created += 1;
  return `pets-test-${what}-${process.pid}-${Date.now().toString(36)}-${created}`;
}

/** A new named volume, removed (with any container still using it) when the test ends. */
export async function createVolume(t: Test): Promise<string> {
  const name = uniqueName('data');
  t.teardown(() => podman(['volume', 'rm', '--force', name]).then(() => undefined));
  await podmanOk(['volume', 'create', name]);
  return name;
}

export interface ContainerOptions {
  env?: Record<string, string>;
  /** Named volume mounted at the image's DATA_DIR, /app/data. */
  volume: string;
  /** Podman's --network; the default bridge when unset. */
  network?: string;
  /** Run with a read-only root: only the data volume and a tmpfs /tmp are writable. */
  readOnly?: boolean;
  /** A command instead of the image's CMD. */
  command?: string[];
}

/** The podman run options an operator would use, as the docs say. */
function runOptions(options: ContainerOptions): string[] {
  const args = ['--volume', `${options.volume}:/app/data`];
  if (options.readOnly) args.push('--read-only', '--read-only-tmpfs=false', '--tmpfs', '/tmp');
  if (options.network) args.push('--network', options.network);
  for (const [name, value] of Object.entries(options.env ?? {})) args.push('--env', `${name}=${value}`);
  return args;
}

/** Runs a one-off command of the image to its end (`podman run --rm`), as a release step does. */
export function runOnce(options: ContainerOptions & { command: string[] }): Promise<CommandResult> {
  return podman(['run', '--rm', '--name', uniqueName('once'), ...runOptions(options), imageRef, ...options.command]);
}

export interface Container {
  name: string;
  /** http://127.0.0.1:<published port> */
  origin: string;
  /** The origin with the API's base path. */
  baseUrl: string;
  metricsOrigin: string;
}

/** The host address a container port is published on, as http://127.0.0.1:<port>. */
export async function publishedOrigin(name: string, port: number): Promise<string> {
  const published = (await podmanOk(['port', name, `${port}/tcp`])).split('\n')[0] ?? '';
  if (!/^127\.0\.0\.1:\d+$/.test(published)) throw new Error(`${name}: ${port} published as "${published}"`);
  return `http://${published}`;
}

/** Starts a container of the image in the background; it is removed when the test ends. */
export async function startContainer(t: Test, options: ContainerOptions): Promise<Container> {
  const name = uniqueName('svc');
  t.teardown(() => podman(['rm', '--force', '--time', '0', name]).then(() => undefined));
  await podmanOk([
    'run',
    '--detach',
    '--name',
    name,
    '--publish',
    `127.0.0.1::${apiPort}`,
    '--publish',
    `127.0.0.1::${metricsPort}`,
    ...runOptions(options),
    imageRef,
    ...(options.command ?? []),
  ]);
  return addresses(name);
}

/** A container's published addresses (read again after a restart). */
export async function addresses(name: string): Promise<Container> {
  const origin = await publishedOrigin(name, apiPort);
  const { document } = loadContract();
  return {
    name,
    origin,
    baseUrl: `${origin}${basePath(document)}`,
    metricsOrigin: await publishedOrigin(name, metricsPort),
  };
}

export async function containerState(name: string): Promise<{ running: boolean; exitCode: number }> {
  const [running, exitCode] = (
    await podmanOk(['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', name])
  ).split(' ');
  return { running: running === 'true', exitCode: Number(exitCode) };
}

export async function logsOf(name: string): Promise<string> {
  const result = await podman(['logs', name]);
  return result.stdout + result.stderr;
}

/** Waits until /readyz answers 200 through the published port; fails at once if the container exits. */
export async function waitReady(container: Container, timeoutMs = 90_000): Promise<void> {
  await waitUntil({ what: `${container.name} ready`, timeoutMs }, async () => {
    const state = await containerState(container.name);
    if (!state.running)
      throw new Error(`${container.name} exited ${state.exitCode}:\n${(await logsOf(container.name)).slice(-3000)}`);
    const response = await fetch(`${container.origin}/readyz`);
    await response.arrayBuffer();
    return response.status === 200 ? true : undefined;
  });
}

/** The key the service printed at its first start on an empty database. */
export async function firstKeyOf(name: string): Promise<string> {
  const logs = await logsOf(name);
  const key = /No API key existed, so one was created[^\n]*\n\s*\n\s{4}(\S{20,})\n/.exec(logs)?.[1];
  if (!key) throw new Error(`${name} printed no first key:\n${logs.slice(-3000)}`);
  return key;
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
}

/** The outcome of one request while a server may be stopping. */
export type Outcome =
  | { kind: 'answered'; status: number; connectionClose: boolean }
  | { kind: 'refused' }
  /** The connection was reset or closed before any byte of an answer. */
  | { kind: 'reset'; error: string }
  /** An answer began and did not arrive whole. */
  | { kind: 'cut'; error: string };

/**
 * One GET, read to the end of its body: "answered" when the whole answer
 * arrived, "refused" when the connection was refused, "reset" when the
 * connection broke before any of the answer, "cut" when it broke during it.
 */
export function requestOnce(url: string, agent: Agent | false, headers: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    let answerStarted = false;
    const request = httpRequest(url, { agent, headers, timeout: 30_000 }, (response) => {
      answerStarted = true;
      response.on('data', () => undefined);
      response.on('error', (error) => {
        resolve({ kind: 'cut', error: `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}` });
      });
      response.on('end', () => {
        if (!response.complete) resolve({ kind: 'cut', error: 'the answer ended before its body did' });
        else
          resolve({
            kind: 'answered',
            status: response.statusCode ?? 0,
            connectionClose: response.headers.connection === 'close',
          });
      });
    });
    request.on('timeout', () => request.destroy(new Error('no answer within 30 s')));
    request.on('error', (error: NodeJS.ErrnoException) => {
      const described = `${error.code ?? ''} ${error.message}`;
      if (error.code === 'ECONNREFUSED') resolve({ kind: 'refused' });
      else resolve({ kind: answerStarted ? 'cut' : 'reset', error: described });
    });
    request.end();
  });
}

/** Runs per property of each operation for the conformance checks against an image. */
const conformanceRuns = Number(process.env['IMAGE_CONFORMANCE_RUNS'] || 25);

/** The conformance suite's generated requests, sent through the published port. */
export function checkConformance(t: Test, container: Container, apiKey: string): Promise<void> {
  return checkGeneratedRequests(t, {
    origin: container.origin,
    basePath: basePath(loadContract().document),
    apiKey,
    runs: conformanceRuns,
    through: 'the published port',
  });
}

/** `npm run verify -- --read-only` against the container, as a deploy pipeline runs it against production. */
export function runVerify(baseUrl: string, apiKey: string): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'verify', '--', '--base-url', baseUrl, '--read-only', '--max-requests', '300'],
      {
        cwd: repoRoot,
        env: { ...process.env, API_KEY: apiKey },
        timeout: 180_000,
        maxBuffer: 64 << 20,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        resolve({ status: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}
