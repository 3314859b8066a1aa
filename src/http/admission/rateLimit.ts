import rateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../../config/load.js';
import { ApiError } from '../../errors.js';
import { routeOf, type Step } from '../pipeline.js';
import { localRateLimit, type LimitOutcome } from './localRateLimit.js';
import { createBreakerStore } from './rateLimitStore.js';
import { acceptedKeyHash, awaitsLookUpOfUnknownKey } from './authentication.js';
import { clientAddressOf } from './clientAddress.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** countAddressBeforeLookUp counted this request against its address already. */
    addressCounted: boolean;
  }
}

export type RateLimitConfig = Pick<Config, 'RATE_LIMIT_MAX' | 'RATE_LIMIT_WINDOW_SECONDS' | 'REDIS_URL'>;

// One name for the single policy; the IETF RateLimit fields refer to it.
const policyName = '"default"';

/**
 * The bucket a request counts against: its API key once authenticate()
 * accepted one (by hash, so the store never holds a key), else the client
 * address. A request with a wrong key counts against its address, which is
 * what slows key guessing down.
 */
function bucketOf(request: FastifyRequest): string {
  const keyHash = acceptedKeyHash(request);
  return keyHash ? `key:${keyHash}` : `ip:${clientAddressOf(request)}`;
}

// ioredis is loaded only when REDIS_URL is set: without it, a start would
// load and keep its ~300 KB of code for nothing.
async function openRedis(app: FastifyInstance, url: string, timeoutMs: number): Promise<Redis> {
  const { Redis } = await import('ioredis');
  // The breaker store bounds each call; ioredis itself must not hold a
  // command for long either (commandTimeout), nor retry it more than once.
  const redis = new Redis(url, { connectTimeout: 2000, commandTimeout: timeoutMs, maxRetriesPerRequest: 1 });
  // Connection errors are reported by the breaker store (once per outage).
  redis.on('error', () => undefined);
  app.addHook('onClose', async () => {
    redis.disconnect();
  });
  return redis;
}

/** The store class @fastify/rate-limit instantiates: Redis behind a circuit breaker. */
async function breakerStoreClass(
  app: FastifyInstance,
  url: string,
  timeoutMs: number,
): Promise<FastifyRateLimitStoreCtor> {
  const store = createBreakerStore({
    redis: await openRedis(app, url, timeoutMs),
    nameSpace: 'pets-rate-limit:',
    timeoutMs,
    log: app.log,
  });
  return class BreakerStore {
    incr = store.incr;
    child = store.child;
  };
}

type LimitedOutcome = Pick<LimitOutcome, 'remaining' | 'ttlInSeconds'>;

/** With REDIS_URL: @fastify/rate-limit, as a counter store only (global: false), on Redis behind a breaker. */
async function sharedCounter(
  app: FastifyInstance,
  config: RateLimitConfig & { REDIS_URL: string },
  redisTimeoutMs: number,
) {
  await app.register(rateLimit, {
    global: false,
    max: config.RATE_LIMIT_MAX,
    timeWindow: config.RATE_LIMIT_WINDOW_SECONDS * 1000,
    keyGenerator: bucketOf,
    skipOnError: true,
    store: await breakerStoreClass(app, config.REDIS_URL, redisTimeoutMs),
  });
  return app.createRateLimit();
}

/**
 * Returns the pipeline steps that count requests, so that the app decides
 * where in the hook order limiting happens and which headers describe it.
 * Without REDIS_URL the count is this process's, answered synchronously
 * (localRateLimit); with it, Redis's. Routes with `config.rateLimit: false`
 * (health probes) are not limited. Each call to Redis waits at most
 * redisTimeoutMs (httpLimits).
 */
export async function rateLimiter(
  app: FastifyInstance,
  config: RateLimitConfig,
  redisTimeoutMs: number,
  countRejection: () => void = () => undefined,
) {
  app.decorateRequest('addressCounted', false);
  const { REDIS_URL: redisUrl } = config;
  const shared =
    redisUrl === undefined ? undefined : await sharedCounter(app, { ...config, REDIS_URL: redisUrl }, redisTimeoutMs);
  const policy = `${policyName};q=${config.RATE_LIMIT_MAX};w=${config.RATE_LIMIT_WINDOW_SECONDS}`;

  function remaining(outcome: LimitedOutcome): string {
    return `${policyName};r=${outcome.remaining};t=${outcome.ttlInSeconds}`;
  }

  function fields(outcome: LimitedOutcome): Record<string, string> {
    return { 'ratelimit-policy': policy, ratelimit: remaining(outcome) };
  }

  function tooManyRequests(outcome: LimitedOutcome): ApiError {
    countRejection();
    const wait = Math.max(outcome.ttlInSeconds, 1);
    return new ApiError(429, 'rate_limited', `Rate limit exceeded; retry in ${wait} seconds.`, {
      ...fields(outcome),
      'retry-after': String(wait),
    });
  }

  /** Applies an outcome: the RateLimit fields, or a 429 (thrown). */
  function apply(outcome: LimitOutcome, reply: FastifyReply): void {
    if (outcome.isExceeded) throw tooManyRequests(outcome);
    // The policy is the same string on every answer; no object per request.
    reply.header('ratelimit-policy', policy).header('ratelimit', remaining(outcome));
  }

  /** In Redis, through the plugin: one promise per request; a 429 thrown by apply rejects it. */
  function countInRedis(countShared: NonNullable<typeof shared>): Step {
    return (request, reply) =>
      countShared(request).then((outcome) => {
        if (!outcome.isAllowed) apply(outcome, reply);
      });
  }

  /** In this process, answered at once: a 429 is thrown. */
  function countInProcess(): Step {
    const countHere = localRateLimit(config.RATE_LIMIT_MAX, config.RATE_LIMIT_WINDOW_SECONDS * 1000);
    return (request, reply) => {
      apply(countHere(bucketOf(request)), reply);
    };
  }

  const count = shared ? countInRedis(shared) : countInProcess();

  /**
   * A step that counts the request when `needed`: synchronously in this
   * process, or with one promise when Redis counts. A failure of either (a
   * 429, or a metric that throws) is the pipeline's error answer, never a hang.
   */
  function countingStep(
    needed: (request: FastifyRequest) => boolean,
    before?: (request: FastifyRequest) => void,
  ): Step {
    return (request, reply) => {
      if (!needed(request)) return undefined;
      before?.(request);
      return count(request, reply);
    };
  }

  /**
   * Before a key that is not remembered is hashed and looked up, the request
   * counts against the client's address: past the limit it is answered 429
   * at once, so guessing keys (one wrong key or many, however concurrent)
   * costs neither hashing nor a query. A key accepted before (its cache time
   * ran out) is looked up without this, so a client sharing an address with
   * a guesser keeps working.
   */
  const countAddressBeforeLookUp = countingStep(awaitsLookUpOfUnknownKey, (request) => {
    request.addressCounted = true;
  });

  /** Counts the request against its key, or its address without a valid key; 429 past the limit. */
  const limitRate = countingStep(
    (request) =>
      routeOf(request).config.rateLimit !== false &&
      !(request.addressCounted && acceptedKeyHash(request) === undefined),
  );

  return { countAddressBeforeLookUp, limitRate };
}
