import type { Test } from 'tap';
import type { AppConfig, AppDeps } from '../../src/app.js';
import type { Database } from '../../src/db/index.js';
import { startTestApp } from './app.js';
import type { Backend } from './databases.js';

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

/** What a scripted fetch answers to one request: an answer, or a lost connection. */
export type ScriptedAnswer = { status: number; body?: unknown; headers?: Record<string, string> } | 'connection lost';

/**
 * A fetch that answers from a script, one entry per request, and records each request (method, URL,
 * headers, body): the client's loop without a service. Past the script's end, it answers the last entry.
 */
export function scriptedFetch(script: ScriptedAnswer[]): {
  fetch: typeof fetch;
  requests: { method: string; url: string; headers: Headers; body: string }[];
} {
  const requests: { method: string; url: string; headers: Headers; body: string }[] = [];
  const scripted: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    requests.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() });
    const answer = script[Math.min(requests.length - 1, script.length - 1)];
    if (answer === undefined || answer === 'connection lost') throw new TypeError('fetch failed');
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
