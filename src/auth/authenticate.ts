import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { findActiveKeyId } from '../db/apiKeys.js';
import type { Queryable } from '../db/index.js';
import { ApiError } from '../errors.js';
import { hashApiKey } from './keys.js';

const realm = 'Bearer realm="pets"';
// RFC 6750 b64token after a case-insensitive "Bearer" and one or more spaces.
const bearer = /^bearer +([A-Za-z0-9._~+/-]+=*) *$/i;
const maxCachedKeys = 10_000;

function unauthorized(message: string, tokenSent: boolean): ApiError {
  const challenge = tokenSent ? `${realm}, error="invalid_token"` : realm;
  return new ApiError(401, 'unauthorized', message, { 'www-authenticate': challenge });
}

export interface AcceptedKey {
  keyId: number;
  keyHash: string;
}

export interface KeyCheckerOptions {
  db: Queryable;
  /** How long a key found active is trusted without asking the database again. */
  cacheSeconds: number;
  now?: () => number;
}

/**
 * Looks keys up by hash. Keys found active are remembered for cacheSeconds,
 * which bounds how long a revoked key still passes; unknown keys are never
 * cached, so a new key works at once. A remembered key is answered at once,
 * without hashing it again or waiting a tick; only a lookup returns a promise.
 */
export function createKeyChecker({ db, cacheSeconds, now = Date.now }: KeyCheckerOptions) {
  const activeUntil = new Map<string, AcceptedKey & { until: number }>();
  async function lookUp(key: string): Promise<AcceptedKey | undefined> {
    const keyHash = hashApiKey(key);
    const keyId = await findActiveKeyId(db, keyHash);
    if (keyId === undefined) return undefined;
    if (cacheSeconds > 0) {
      if (activeUntil.size >= maxCachedKeys) activeUntil.clear();
      activeUntil.set(key, { keyId, keyHash, until: now() + cacheSeconds * 1000 });
    }
    return { keyId, keyHash };
  }
  return function keyIdOf(key: string): AcceptedKey | Promise<AcceptedKey | undefined> {
    const cached = activeUntil.get(key);
    if (cached && cached.until > now()) return cached;
    if (cached) activeUntil.delete(key);
    return lookUp(key);
  };
}

export type KeyChecker = ReturnType<typeof createKeyChecker>;

declare module 'fastify' {
  interface FastifyRequest {
    apiKeyId: number | undefined;
    /** SHA-256 of the accepted key: identifies the caller (rate limits) without holding the key. */
    apiKeyHash: string | undefined;
    /** Why the request is not authenticated, when its route needs it; thrown by requireAuthentication. */
    authFailure: ApiError | undefined;
  }
  interface FastifyContextConfig {
    /** Security schemes the operation requires, from openapi.yaml; empty for public routes. */
    securitySchemes?: string[];
    operationId?: string;
  }
}

/**
 * An onRequest hook: it runs before the body is read or validated, so a
 * request without a valid key gets 401 whatever else is wrong with it. It
 * only records the outcome; requireAuthentication acts on it, so that hooks
 * in between (the rate limit) can count a failed attempt against the
 * client's address before it is answered.
 */
export function authenticate(keyIdOf: KeyChecker) {
  function record(request: FastifyRequest, accepted: AcceptedKey | undefined): void {
    if (accepted === undefined) {
      request.authFailure = unauthorized('Invalid or revoked API key.', true);
      return;
    }
    request.apiKeyId = accepted.keyId;
    request.apiKeyHash = accepted.keyHash;
  }
  return function identifyCaller(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const schemes = request.routeOptions.config.securitySchemes;
    if (!schemes || schemes.length === 0) return done();
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      request.authFailure = unauthorized("Missing API key; send it as 'Authorization: Bearer <API_KEY>'.", false);
      return done();
    }
    const match = bearer.exec(header);
    if (!match?.[1]) {
      request.authFailure = unauthorized("Malformed Authorization header; expected 'Bearer <API_KEY>'.", /^bearer\b/i.test(header));
      return done();
    }
    const accepted = keyIdOf(match[1]);
    if (!(accepted instanceof Promise)) {
      record(request, accepted);
      return done();
    }
    accepted.then((result) => {
      record(request, result);
      done();
    }, done);
  };
}

/** The onRequest hook that answers 401 for a request authenticate() did not accept. */
export function requireAuthentication(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  done(request.authFailure);
}
