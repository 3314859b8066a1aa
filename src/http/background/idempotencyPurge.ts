import type { FastifyInstance } from 'fastify';
import { purgeExpiredKeys } from '../../db/idempotencyKeys.js';
import { DatabaseUnavailableError, unavailabilityOf, type Database } from '../../db/index.js';

/** A 24th of the retention window, between a minute and an hour. */
export function purgeIntervalMs(ttlSeconds: number): number {
  return Math.min(Math.max(ttlSeconds / 24, 60), 3600) * 1000;
}

/**
 * Deletes Idempotency-Keys past the expiry stored with each: once the app is
 * ready and its database migrated (databaseReady, at start-up), then on a
 * timer. Expired keys are never replayed even before they are deleted (the
 * lookup checks the expiry), so the timer only bounds the table's size.
 * Every instance runs it, whatever its own IDEMPOTENCY_TTL_SECONDS (which
 * sets only how often); the deletes are idempotent.
 */
export function registerIdempotencyPurge(
  app: FastifyInstance,
  db: Database,
  ttlSeconds: number,
  databaseReady?: Promise<void>,
): void {
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const purge = async () => {
    try {
      const deleted = await purgeExpiredKeys(db);
      if (deleted > 0) app.log.info({ deleted }, 'expired idempotency keys deleted');
      else app.log.debug('idempotency key purge ran: nothing expired');
    } catch (error) {
      // During a database outage: the reason, no stack (the outage is logged on its own).
      const fields = error instanceof DatabaseUnavailableError ? { reason: unavailabilityOf(error) } : { err: error };
      app.log.warn(fields, 'idempotency key purge failed; it runs again later');
    }
  };
  const start = async () => {
    await purge();
    // The app may have closed while the first purge ran.
    if (closed) return;
    timer = setInterval(() => void purge(), purgeIntervalMs(ttlSeconds));
    timer.unref();
  };
  app.addHook('onReady', async () => {
    // The server listens (for /healthz) before the database is migrated.
    if (databaseReady) void databaseReady.then(start);
    else await start();
  });
  app.addHook('onClose', async () => {
    closed = true;
    clearInterval(timer);
  });
}
