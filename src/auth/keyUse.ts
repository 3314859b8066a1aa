import { recordApiKeyUses, type KeyUse } from '../db/apiKeys.js';
import type { Queryable } from '../db/index.js';

/**
 * How often the last uses are written: api_keys.last_used_at is at most
 * this late (plus one write), under the minute an operator is promised.
 */
export const keyUseFlushMs = 30_000;

export interface KeyUseRecorder {
  /** In memory only: a map entry per key, no I/O on the request path. */
  record(keyId: number): void;
  /** Writes what was recorded since the last flush in one statement. */
  flush(): Promise<void>;
  /** Flushes every intervalMs until stopped; stop flushes what is left. */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

export interface KeyUseRecorderOptions {
  db: Queryable;
  now?: () => number;
  /** A flush that failed (its uses are kept for the next). */
  onError?: (error: unknown) => void;
}

export function createKeyUseRecorder({
  db,
  now = Date.now,
  onError = () => undefined,
}: KeyUseRecorderOptions): KeyUseRecorder {
  let pending = new Map<number, number>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;

  async function write(batch: Map<number, number>): Promise<void> {
    const uses: KeyUse[] = [...batch].map(([keyId, at]) => ({ keyId, usedAt: new Date(at) }));
    try {
      await recordApiKeyUses(db, uses);
    } catch (error) {
      // Kept for the next flush, unless a later use of the key came meanwhile.
      for (const [keyId, at] of batch) if (!pending.has(keyId)) pending.set(keyId, at);
      onError(error);
    }
  }

  function flush(): Promise<void> {
    // One write at a time: a slow database never piles up statements.
    if (flushing) return flushing.then(flush);
    if (pending.size === 0) return Promise.resolve();
    const batch = pending;
    pending = new Map();
    flushing = write(batch).finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  return {
    record(keyId) {
      pending.set(keyId, now());
    },
    flush,
    start(intervalMs = keyUseFlushMs) {
      timer ??= setInterval(() => void flush(), intervalMs).unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}
