import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

/** One count: how many requests this window, and how long until it ends (ms). */
export interface Count {
  current: number;
  ttl: number;
}

type Callback = (error: Error | null, result?: Count) => void;

/** The store interface @fastify/rate-limit calls (see its FastifyRateLimitStore). */
export interface CounterStore {
  incr: (key: string, callback: Callback, timeWindow: number, max: number) => void;
  child: () => CounterStore;
}

// INCR, and start a window whenever the counter has no expiry: on the first
// request of a window, and on a counter that lost its expiry (restored from a
// dump, PERSIST), which would otherwise lock its bucket out for good. Such a
// counter does not say when its window began, so it starts afresh at 1.
const incrementScript = `
local current = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl ~= -1 then return {current, ttl} end
redis.call('SET', KEYS[1], 1, 'PX', ARGV[1])
return {1, tonumber(ARGV[1])}`;

/** Fixed-window counters in this process, bounded in number (oldest window dropped first). */
export class ProcessCounters {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  constructor(private readonly capacity = 10000) {}

  increment(key: string, timeWindow: number): Count {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      this.windows.delete(key);
      if (this.windows.size >= this.capacity) {
        const oldest = this.windows.keys().next();
        if (!oldest.done) this.windows.delete(oldest.value);
      }
      window = { count: 0, endsAt: now + timeWindow };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { current: window.count, ttl: window.endsAt - now };
  }
}

export interface BreakerOptions {
  redis: Redis;
  /** Key prefix in Redis. */
  nameSpace: string;
  /** Longest wait for one Redis answer. */
  timeoutMs: number;
  /** Consecutive failures that open the breaker. */
  failuresToOpen?: number;
  /** How long the breaker stays open before one request tries Redis again. */
  openMs?: number;
  log: FastifyBaseLogger;
  /** The clock openMs is measured by (Date.now; a test passes its own). */
  now?: () => number;
}

class RedisTimeoutError extends Error {
  override name = 'RedisTimeoutError';
}

/**
 * Counts in Redis (shared by every instance) with a short deadline per call;
 * a call that fails or misses it is counted in this process instead. After
 * failuresToOpen failures in a row the breaker opens: for openMs no request
 * asks Redis, then one request tries it (the others still count here) and
 * its success closes the breaker. Opening and closing are logged once each.
 */
export function createBreakerStore(options: BreakerOptions): CounterStore {
  const failuresToOpen = options.failuresToOpen ?? 3;
  const openMs = options.openMs ?? 2000;
  const now = options.now ?? Date.now;
  const local = new ProcessCounters();
  let failures = 0;
  let openedAt: number | undefined;
  let retryAt = 0;
  let probing = false;

  const askRedis = (key: string, timeWindow: number): Promise<Count> =>
    new Promise<Count>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new RedisTimeoutError(`no answer within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      options.redis.eval(incrementScript, 1, options.nameSpace + key, String(timeWindow)).then(
        (result) => {
          clearTimeout(timer);
          const [current, ttl] = result as [number, number];
          resolve({ current, ttl });
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });

  const succeeded = () => {
    failures = 0;
    if (openedAt !== undefined) {
      options.log.info(
        { durationMs: now() - openedAt },
        'rate-limit store (Redis) answers again: limits are shared again',
      );
      openedAt = undefined;
    }
  };

  const failed = (error: Error) => {
    failures += 1;
    if (openedAt === undefined && failures >= failuresToOpen) {
      openedAt = now();
      options.log.warn(
        { reason: error.message, failures },
        'rate-limit store (Redis) failing: counting in each process until it answers',
      );
    }
    if (openedAt !== undefined) retryAt = now() + openMs;
  };

  const store: CounterStore = {
    incr(key, callback, timeWindow) {
      const open = openedAt !== undefined;
      if (open && (probing || now() < retryAt)) {
        callback(null, local.increment(key, timeWindow));
        return;
      }
      probing = open;
      askRedis(key, timeWindow).then(
        (count) => {
          probing = false;
          succeeded();
          callback(null, count);
        },
        (error: unknown) => {
          probing = false;
          failed(error as Error);
          callback(null, local.increment(key, timeWindow));
        },
      );
    },
    child: () => store,
  };
  return store;
}
