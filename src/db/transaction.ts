import type pg from 'pg';
import { ignoreDroppedConnection, queryableOf, type StatementSettings } from './pool.js';
import { rideThrough, type RideThroughSettings } from './rideThrough.js';
import type { Queryable } from './types.js';
import { passesSoon, translate, unavailabilityReason } from './unavailability.js';

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
export function runTransaction<T>(
  pool: pg.Pool,
  settings: StatementSettings,
  rideThroughSettings: RideThroughSettings | undefined,
  work: (tx: Queryable) => Promise<T>,
): Promise<T> {
  const progress: Progress = { commitSent: false };
  return rideThrough(
    rideThroughSettings,
    () => {
      progress.commitSent = false;
      return attempt(pool, settings, work, progress);
    },
    (error) => !progress.commitSent && passesSoon(error),
  );
}
