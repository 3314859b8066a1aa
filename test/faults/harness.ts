import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import { generateApiKey } from '../../src/auth/keys.js';
import { startPostgres, type PostgresServer } from '../../lib/instances/index.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { walkPets, type Pet } from '../helpers/pages.js';

export const apiKey = generateApiKey();
export const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };

/** A private PostgreSQL cluster with an empty database "pets"; removed when the test ends. */
export async function privatePostgres(t: Test): Promise<{ pg: PostgresServer; url: string }> {
  const pg = await startPostgres();
  t.teardown(() => pg.remove());
  await pg.query('CREATE DATABASE pets');
  return { pg, url: pg.url('pets') };
}

/** The service in this process (startServer, as production runs it), shut down when the test ends. */
export async function serve(
  t: Test,
  env: Record<string, string>,
  options: Parameters<typeof startServer>[2] = {},
): Promise<RunningServer & { api: string }> {
  const server = await startServer(
    {
      LOG_LEVEL: 'silent',
      PORT: '0',
      HOST: '127.0.0.1',
      // A free port: 9464, the default, may be another server's on this machine.
      METRICS_PORT: '0',
      BOOTSTRAP_API_KEY: apiKey,
      RATE_LIMIT_MAX: '1000000',
      DRAIN_DELAY_MS: '0',
      ...env,
    },
    { write: () => true } as unknown as NodeJS.WritableStream,
    options,
  );
  let closed = false;
  t.teardown(async () => {
    if (!closed) await server.shutdown('test end');
  });
  return {
    ...server,
    api: `${server.address}/v1`,
    shutdown: async (signal) => {
      closed = true;
      return server.shutdown(signal);
    },
  };
}

export interface Answer {
  status: number;
  body: { id?: number; code?: string; message?: string; status?: number };
}

/** One request; a connection failure is status 0. */
export async function call(url: string, init: RequestInit = {}, timeoutMs = 20_000): Promise<Answer> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    let body: Answer['body'] = {};
    try {
      body = JSON.parse(text) as Answer['body'];
    } catch {
      body = { message: text.slice(0, 200) };
    }
    return { status: response.status, body };
  } catch {
    return { status: 0, body: {} };
  }
}

export function createPet(api: string, name: string): Promise<Answer> {
  return call(`${api}/pets`, { method: 'POST', headers: auth, body: JSON.stringify({ name, categoryId: 1 }) });
}

/** Every pet on a server of this suite, 100 a page (walkPets). */
export function listAll(api: string): Promise<Pet[]> {
  return walkPets(api, apiKey, 100);
}

/** Polls probe every 100 ms until it returns true, at most timeoutMs. */
export async function waitFor(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/** p-th percentile (0-100) of values. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}
