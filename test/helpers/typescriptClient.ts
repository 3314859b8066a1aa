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
