import type { RideThroughReport } from './types.js';
import { unavailabilityReason } from './unavailability.js';

/**
 * How long a transaction that failed without effect on the database (see
 * runTransaction) is tried again before its caller hears of the failure.
 * A planned switchover of the failover topology stops commits for 1.5 to
 * 3 s on a loaded 2-core machine (bench/switchoverGap.ts, docs/scaling.md
 * "Losing the primary"): 5 s covers that with room, so the requests of a
 * switchover wait instead of failing, while an outage that lasts (a crash,
 * a failover of 7 to 8 s) still answers 503 within seconds. Far inside the
 * 10 s bound on each statement and a client's usual 30 s timeout.
 */
export const rideThroughBudgetMs = 5000;

/**
 * The wait before each new attempt: 50 ms, doubling, at most 250 ms. The
 * first retries are quick (a cut connection is often the only failure);
 * past that every waiting request tries four times a second, which finds
 * the new primary within a quarter second of it taking writes and costs a
 * refused connection each time until then.
 */
const firstRetryDelayMs = 50;
const longestRetryDelayMs = 250;

export function retryDelayMs(failedAttempts: number): number {
  return Math.min(longestRetryDelayMs, firstRetryDelayMs * 2 ** (failedAttempts - 1));
}

export interface RideThroughSettings {
  budgetMs: number;
  /** False once the work in flight is being cancelled (shutdown): nothing is tried again then. */
  active: () => boolean;
  /** Called once per transaction that was tried again, when it ends. */
  onRideThrough?: ((report: RideThroughReport) => void) | undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs attempt, and again after a short wait each time it fails in a way
 * mayTryAgain accepts, until settings' budget is spent (or the work in
 * flight is cancelled); then, or at any other failure, rethrows. Reports
 * each unit of work that was tried again, once, when it ends.
 */
export async function rideThrough<T>(
  settings: RideThroughSettings | undefined,
  attempt: () => Promise<T>,
  mayTryAgain: (error: unknown) => boolean,
): Promise<T> {
  const startedAt = Date.now();
  let reason: string | undefined;
  const report = (attempts: number, outcome: RideThroughReport['outcome']) => {
    if (reason !== undefined)
      settings?.onRideThrough?.({ reason, attempts, durationMs: Date.now() - startedAt, outcome });
  };
  for (let attempts = 1; ; attempts += 1) {
    try {
      const result = await attempt();
      report(attempts, 'succeeded');
      return result;
    } catch (error) {
      const delay = retryDelayMs(attempts);
      const again =
        settings?.active() === true && mayTryAgain(error) && Date.now() + delay - startedAt < settings.budgetMs;
      reason ??= again ? unavailabilityReason(error) : undefined;
      if (again) await sleep(delay);
      // Shutdown may have cancelled the work in flight meanwhile.
      if (!again || !settings.active()) {
        report(attempts, 'gave up');
        throw error;
      }
    }
  }
}
