import type pg from 'pg';
import { ignoreDroppedConnection, queryableOf, type StatementSettings } from './pool.js';
import { retryDelayMs, type RideThroughReport, type RideThroughSettings } from './rideThrough.js';
import type { Queryable } from './types.js';
import { passesSoon, translate, unavailabilityReason } from './unavailable.js';

/** How far one attempt got: once COMMIT is sent, a failure leaves the outcome unknown. */
interface Progress {
  commitSent: boolean;
}

/** BEGIN, work, COMMIT on one connection; ROLLBACK on failure. */
async function attempt<T>(
  pool: pg.Pool,
  settings: StatementSettings,
  work: (tx: Queryable) => Promise<T>,
  progress: Progress,
): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    return translate(error);
  }
  client.on('error', ignoreDroppedConnection);
  let broken = false;
  const tx = queryableOf(client, settings);
  try {
    await tx.execScript('BEGIN');
    const result = await work(tx);
    progress.commitSent = true;
    await tx.execScript('COMMIT');
    return result;
  } catch (error) {
    // A connection that failed or timed out is in no known state: closing it
    // rolls the transaction back on the server.
    broken = unavailabilityReason(error) !== undefined;
    if (!broken) {
      await tx.execScript('ROLLBACK').catch(() => {
        broken = true;
      });
    }
    return translate(error);
  } finally {
    // A connection that failed mid-transaction is not given back to the pool.
    client.removeListener('error', ignoreDroppedConnection);
    client.release(broken);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * BEGIN, work, COMMIT on one connection, ridden through a short outage: a
 * failure that provably left the database untouched (no connection could
 * be made, or a statement before COMMIT met an outage that passes soon:
 * the server rolls such a transaction back) is tried again on a fresh
 * connection until rideThrough's budget is spent; then, or at any other
 * failure, the caller gets the error. A failure once COMMIT was sent is
 * never tried again: the transaction may have committed (the Idempotency-Key
 * lets a client find out), and running it again could do it twice.
 */
export async function runTransaction<T>(
  pool: pg.Pool,
  settings: StatementSettings,
  rideThrough: RideThroughSettings | undefined,
  work: (tx: Queryable) => Promise<T>,
): Promise<T> {
  const startedAt = Date.now();
  let reason: string | undefined;
  const report = (attempts: number, outcome: RideThroughReport['outcome']) => {
    if (reason !== undefined)
      rideThrough?.onRideThrough?.({ reason, attempts, durationMs: Date.now() - startedAt, outcome });
  };
  for (let attempts = 1; ; attempts += 1) {
    const progress: Progress = { commitSent: false };
    try {
      const result = await attempt(pool, settings, work, progress);
      report(attempts, 'succeeded');
      return result;
    } catch (error) {
      const delay = retryDelayMs(attempts);
      const again =
        rideThrough?.active() === true &&
        !progress.commitSent &&
        passesSoon(error) &&
        Date.now() + delay - startedAt < rideThrough.budgetMs;
      reason ??= again ? unavailabilityReason(error) : undefined;
      if (again) await sleep(delay);
      // Shutdown may have cancelled the work in flight meanwhile.
      if (!again || !rideThrough.active()) {
        report(attempts, 'gave up');
        throw error;
      }
    }
  }
}
