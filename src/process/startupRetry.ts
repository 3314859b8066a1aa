import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseUnavailableError, unavailabilityOf } from '../db/index.js';

/** Where a PostgreSQL URL points, without credentials: host:port/database. */
export function describeDatabaseUrl(url: string): { where: string; database: string } {
  const parsed = new URL(url);
  const database = decodeURIComponent(parsed.pathname.slice(1)) || 'postgres';
  return { where: `${parsed.hostname}:${parsed.port || '5432'}/${database}`, database };
}

/**
 * Why a start-up attempt may succeed later (the server is down or starting,
 * the database is being created), or undefined when retrying cannot help.
 */
export function retryableReason(error: unknown, url: string): string | undefined {
  if (error instanceof DatabaseUnavailableError) return unavailabilityOf(error);
  if (error instanceof Error && (error as { code?: unknown }).code === '3D000') {
    const { database } = describeDatabaseUrl(url);
    return (
      `database "${database}" does not exist: create it (createdb ${database}, or CREATE DATABASE ${database}) ` +
      'and run npm run migrate'
    );
  }
  return undefined;
}

export interface RetryOptions {
  timeoutMs: number;
  url: string;
  signal?: AbortSignal;
  /** Called once per failed attempt that will be retried. */
  onRetry(attempt: number, reason: string, retryInMs: number): void;
}

export class StartupTimeoutError extends Error {
  override name = 'StartupTimeoutError';
}

/**
 * Runs attempt until it succeeds, retrying the failures that may pass
 * (retryableReason) with exponential backoff (250 ms doubling, at most 5 s)
 * until timeoutMs has passed; then a StartupTimeoutError with the last reason.
 */
export async function retryUntilReady<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (let count = 1; ; count += 1) {
    options.signal?.throwIfAborted();
    try {
      return await attempt();
    } catch (error) {
      const reason = retryableReason(error, options.url);
      if (reason === undefined) throw error;
      const left = deadline - Date.now();
      if (left <= 0) {
        const seconds = Math.round(options.timeoutMs / 100) / 10;
        throw new StartupTimeoutError(
          `The database at ${describeDatabaseUrl(options.url).where} was not ready within ${seconds} s ` +
            `(DATABASE_STARTUP_TIMEOUT_MS) after ${count} attempts: ${reason}`,
        );
      }
      const wait = Math.min(250 * 2 ** Math.min(count - 1, 5), 5000, left);
      options.onRetry(count, reason, wait);
      await sleep(wait, undefined, options.signal ? { signal: options.signal } : {}).catch(() => undefined);
    }
  }
}
