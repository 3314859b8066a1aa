import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';

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
  return request.apiKeyHash ? `key:${request.apiKeyHash}` : `ip:${normalizeIP(request.ip)}`;
}

function openRedis(app: FastifyInstance, url: string): Redis {
  // Short timeouts and a single retry: a slow or absent Redis must cost a
  // request little, and the limiter then lets requests through (skipOnError).
  const redis = new Redis(url, { connectTimeout: 2000, commandTimeout: 1000, maxRetriesPerRequest: 1 });
  let healthy = true;
  redis.on('error', (error: Error) => {
    if (healthy) app.log.warn({ err: error }, 'rate-limit store (Redis) unreachable; requests are not rate limited until it is back');
    healthy = false;
  });
  redis.on('ready', () => {
    if (!healthy) app.log.info('rate-limit store (Redis) reachable again');
    healthy = true;
  });
  app.addHook('onClose', async () => {
    redis.disconnect();
  });
  return redis;
}

/**
 * Registers @fastify/rate-limit as a counter store only (global: false) and
 * returns the onRequest hook that applies it, so that the app decides where
 * in the hook order limiting happens and which headers describe it. Routes
 * with `config.rateLimit: false` (health probes) are not limited.
 */
export async function rateLimiter(app: FastifyInstance, config: RateLimitConfig) {
  await app.register(rateLimit, {
    global: false,
    max: config.RATE_LIMIT_MAX,
    timeWindow: config.RATE_LIMIT_WINDOW_SECONDS * 1000,
    keyGenerator: bucketOf,
    skipOnError: true,
    nameSpace: 'pets-rate-limit:',
    ...(config.REDIS_URL ? { redis: openRedis(app, config.REDIS_URL) } : {}),
  });
  const count = app.createRateLimit();
  const policy = `${policyName};q=${config.RATE_LIMIT_MAX};w=${config.RATE_LIMIT_WINDOW_SECONDS}`;

  return async function limitRate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (request.routeOptions.config.rateLimit === false) return;
    const outcome = await count(request);
    if (outcome.isAllowed) return;
    const headers = {
      'ratelimit-policy': policy,
      ratelimit: `${policyName};r=${outcome.remaining};t=${outcome.ttlInSeconds}`,
    };
    if (outcome.isExceeded) {
      const wait = Math.max(outcome.ttlInSeconds, 1);
      throw new ApiError(429, 'rate_limited', `Rate limit exceeded; retry in ${wait} seconds.`, { ...headers, 'retry-after': String(wait) });
    }
    reply.headers(headers);
  };
}
