import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { parse, stringify } from 'yaml';
import { apiTypesSource } from '../../generators/apiTypes.js';
import { writeClient } from '../../generators/client.js';
import type { JsonObject } from '../../lib/openapi/dereference.js';
import { repoRoot } from '../../lib/repoRoot.js';
import type { AppConfig, AppDeps } from '../../src/app.js';
import type { Database } from '../../src/db/index.js';
import { startTestApp } from './app.js';
import type { Backend } from './databases.js';
import { scratchDir } from './scratchSpace.js';

const run = promisify(execFile);

export interface ServedApp {
  /** servers[0].url's path on this server: what a client takes as baseUrl. */
  baseUrl: string;
  /** The server's origin. */
  origin: string;
  key: string;
  db: Database;
}

/** The service (on the embedded database by default), listening on a free port of 127.0.0.1; closed when the test ends. */
export async function serveApp(
  t: Test,
  config: Partial<AppConfig> = {},
  deps: Omit<AppDeps, 'db'> = {},
  backend: Backend = 'embedded',
): Promise<ServedApp> {
  const { app, key, db } = await startTestApp(t, backend, config, deps);
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return { baseUrl: `${origin}/v1`, origin, key, db };
}

export interface Sent {
  method: string;
  url: string;
  headers: Headers;
  /** The answer's status and headers, or the error of a connection that gave none. */
  status: number | undefined;
  answerHeaders: Headers | undefined;
  error: unknown;
  at: number;
}

/** A fetch that records every request the client sends and how it ended. */
export function recordingFetch(): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const entry: Sent = {
      method: request.method,
      url: request.url,
      headers: request.headers,
      status: undefined,
      answerHeaders: undefined,
      error: undefined,
      at: Date.now(),
    };
    sent.push(entry);
    try {
      const response = await fetch(input, init);
      entry.status = response.status;
      entry.answerHeaders = response.headers;
      return response;
    } catch (error) {
      entry.error = error;
      throw error;
    }
  };
  return { fetch: recording, sent };
}

/** How many pets with this name the database holds. */
export async function countPets(db: Database, name: string): Promise<number> {
  const { rows } = await db.query<{ count: string }>({ text: 'SELECT count(*) AS count FROM pets WHERE name = $1' }, [
    name,
  ]);
  return Number(rows[0]?.count);
}

/**
 * What a scripted fetch answers to one request: an answer (`body` as JSON, or `raw` bytes or text as they
 * are, under the Content-Type its headers give), or a lost connection.
 */
export type ScriptedAnswer =
  | { status: number; body?: unknown; raw?: Uint8Array<ArrayBuffer> | string; headers?: Record<string, string> }
  | 'connection lost';

/** A request a scripted fetch received: its body as text and as bytes. */
export interface ScriptedRequest {
  method: string;
  url: string;
  headers: Headers;
  body: string;
  bytes: Uint8Array;
}

/**
 * A fetch that answers from a script, one entry per request, and records each request (method, URL,
 * headers, body): the client's loop without a service. Past the script's end, it answers the last entry.
 */
export function scriptedFetch(script: ScriptedAnswer[]): { fetch: typeof fetch; requests: ScriptedRequest[] } {
  const requests: ScriptedRequest[] = [];
  const scripted: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const bytes = new Uint8Array(await request.arrayBuffer());
    const body = new TextDecoder().decode(bytes);
    requests.push({ method: request.method, url: request.url, headers: request.headers, body, bytes });
    const answer = script[Math.min(requests.length - 1, script.length - 1)];
    if (answer === undefined || answer === 'connection lost') throw new TypeError('fetch failed');
    if (answer.raw !== undefined)
      return new Response(answer.raw, { status: answer.status, headers: answer.headers ?? {} });
    const text = answer.body === undefined ? null : JSON.stringify(answer.body);
    const headers = { ...(text === null ? {} : { 'content-type': 'application/json' }), ...answer.headers };
    return new Response(text, { status: answer.status, headers });
  };
  return { fetch: scripted, requests };
}

/** The Error object of the service's 503, as a scripted answer that asks to be retried at once. */
export const unavailable: ScriptedAnswer = {
  status: 503,
  body: { code: 'service_unavailable', message: 'The service is unavailable.', status: 503 },
  headers: { 'retry-after': '0' },
};

/** The TypeScript client package npm run generate makes of a spec, in a scratch folder. */
export interface GeneratedClient {
  /** The package's folder: src/ holds this tree's hand-written files and the generated ones. */
  dir: string;
  /** src/generated/operations.ts as generated. */
  operations: string;
  /** tsc over the package (with any files the test wrote into src/): its output, empty when it compiles. */
  typecheck(): Promise<string>;
  /** The package's entry, imported. */
  load(): Promise<typeof import('../../clients/typescript/src/index.js')>;
}

/**
 * Runs a spec through the generators npm run generate runs (generators/apiTypes.ts, then
 * generators/client.ts) into a scratch copy of the client package, beside this tree's hand-written files,
 * so a test drives the client of a spec of its own. Removed when the test ends.
 */
export async function generateClient(t: Test, spec: object): Promise<GeneratedClient> {
  const scratch = scratchDir('pets-client-fixture-');
  t.teardown(scratch.remove);
  const dir = join(scratch.path, 'client');
  mkdirSync(join(dir, 'src'), { recursive: true });
  const specFile = join(scratch.path, 'openapi.yaml');
  writeFileSync(specFile, stringify(spec));
  const apiTypes = join(scratch.path, 'api.ts');
  // The generators' own functions, in this process: two tsx processes cost 3 s of CPU per client.
  writeFileSync(apiTypes, await apiTypesSource(parse(readFileSync(specFile, 'utf8')) as JsonObject));
  await writeClient(apiTypes, dir, specFile);
  const clientSrc = join(repoRoot, 'clients/typescript/src');
  for (const name of readdirSync(clientSrc).filter((name) => name.endsWith('.ts')))
    copyFileSync(join(clientSrc, name), join(dir, 'src', name));
  copyFileSync(join(repoRoot, 'clients/typescript/tsconfig.json'), join(dir, 'tsconfig.json'));
  return {
    dir,
    operations: readFileSync(join(dir, 'src/generated/operations.ts'), 'utf8'),
    typecheck: () =>
      run(join(repoRoot, 'node_modules/.bin/tsc'), ['-p', dir], { timeout: 120_000 }).then(
        () => '',
        (error: unknown) => (error as { stdout: string }).stdout,
      ),
    load: async () =>
      (await import(join(dir, 'src/index.ts'))) as typeof import('../../clients/typescript/src/index.js'),
  };
}
