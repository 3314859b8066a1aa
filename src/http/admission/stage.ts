import type { FastifyInstance } from 'fastify';
import { createKeyChecker } from '../../auth/keyChecker.js';
import { createKeyUseRecorder } from '../../auth/keyUse.js';
import type { Config } from '../../config/load.js';
import type { Database } from '../../db/index.js';
import type { ServiceMetrics } from '../../observability/metrics.js';
import type { AfterStep, OperationRoute, Step } from '../pipeline.js';
import {
  countAuthenticationFailure,
  decorateAuthentication,
  identifyCaller,
  requireAuthentication,
  verifyKey,
} from './authentication.js';
import { rateLimiter } from './rateLimit.js';

export type AdmissionConfig = Pick<
  Config,
  'API_KEY_CACHE_SECONDS' | 'RATE_LIMIT_MAX' | 'RATE_LIMIT_WINDOW_SECONDS' | 'REDIS_URL'
>;

/**
 * Admission, as onRequest steps in order: accept a remembered key (no
 * hashing, no query), count a key not remembered against the address before
 * it is hashed and looked up (429 there costs no query), look it up, count
 * the request against its key or address, then refuse it if unauthenticated:
 * after counting, so that guessing keys hits the limit; a key without the
 * scope the operation requires is refused there too (403).
 */
export async function admissionStage(
  app: FastifyInstance,
  db: Database,
  config: AdmissionConfig,
  redisTimeoutMs: number,
  metrics: Pick<ServiceMetrics, 'authenticationFailed' | 'rateLimited'>,
  now: () => number = Date.now,
): Promise<Admission> {
  decorateAuthentication(app);
  // Each key's last use, written in batches by a timer: never a write per request.
  const uses = createKeyUseRecorder({
    db,
    now,
    onError: (error) => {
      app.log.warn({ err: error }, 'writing the last use of API keys failed; tried again later');
    },
  });
  uses.start();
  // Closed before the database is: the last uses are written on shutdown.
  app.addHook('onClose', () => uses.stop());
  const keys = createKeyChecker({
    db,
    cacheSeconds: config.API_KEY_CACHE_SECONDS,
    now,
    uses,
    changes: db.keyChanges,
  });
  app.addHook('onClose', (_app, done) => {
    keys.close();
    done();
  });
  const limiter = await rateLimiter(app, config, redisTimeoutMs, metrics.rateLimited);
  const steps = [
    identifyCaller(keys),
    limiter.countAddressBeforeLookUp,
    verifyKey(keys),
    limiter.limitRate,
    requireAuthentication,
  ];
  // A public operation takes no key: authentication has nothing to do, the count remains.
  const publicSteps = [limiter.limitRate];
  return {
    steps,
    stepsFor: (route) => (route.securitySchemes.length > 0 ? steps : publicSteps),
    afterSteps: [countAuthenticationFailure(metrics.authenticationFailed)],
  };
}

export interface Admission {
  /** The onRequest steps, in order, for any request. */
  steps: Step[];
  /** The steps an operation's route needs. */
  stepsFor: (route: OperationRoute) => Step[];
  /** What admission records once the answer is sent (observeResponses runs them). */
  afterSteps: AfterStep[];
}
