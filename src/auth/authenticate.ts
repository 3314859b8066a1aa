import type { FastifyReply, FastifyRequest } from 'fastify';
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

export interface KeyCheckerOptions {
  db: Queryable;
  /** How long a key found active is trusted without asking the database again. */
  cacheSeconds: number;
  now?: () => number;
}

/**
 * Looks keys up by hash. Keys found active are remembered for cacheSeconds,
 * which bounds how long a revoked key still passes; unknown keys are never
 * cached, so a new key works at once. A cached key is answered synchronously,
 * so the common request pays neither a hash nor a promise.
 */
export function createKeyChecker({ db, cacheSeconds, now = Date.now }: KeyCheckerOptions) {
  // Keyed by the key as sent: hashing it on every hit would cost more than the
  // lookup. The process holds the key while serving the request anyway.
  const activeUntil = new Map<string, { keyId: number; until: number }>();
  async function lookUp(key: string): Promise<number | undefined> {
    const keyId = await findActiveKeyId(db, hashApiKey(key));
    if (keyId !== undefined && cacheSeconds > 0) {
      if (activeUntil.size >= maxCachedKeys) activeUntil.clear();
      activeUntil.set(key, { keyId, until: now() + cacheSeconds * 1000 });
    }
    return keyId;
  }
  return function keyIdOf(key: string): number | Promise<number | undefined> {
    const cached = activeUntil.get(key);
    if (cached !== undefined) {
      if (cached.until > now()) return cached.keyId;
      activeUntil.delete(key);
    }
    return lookUp(key);
  };
}

export type KeyChecker = ReturnType<typeof createKeyChecker>;

declare module 'fastify' {
  interface FastifyRequest {
    apiKeyId: number | undefined;
  }
  interface FastifyContextConfig {
    /** Security schemes the operation requires, from openapi.yaml; empty for public routes. */
    securitySchemes?: string[];
    operationId?: string;
  }
}

/**
 * An onRequest hook: it runs before the body is read or validated, so a
 * request without a valid key gets 401 whatever else is wrong with it.
 * Callback style, so a cached key completes without a promise or a tick.
 */
export function bearerAuthHook(keyIdOf: KeyChecker) {
  return function authenticate(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
    const schemes = request.routeOptions.config.securitySchemes;
    if (!schemes || schemes.length === 0) return done();
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      return done(unauthorized("Missing API key; send it as 'Authorization: Bearer <API_KEY>'.", false));
    }
    const match = bearer.exec(header);
    if (!match?.[1]) {
      return done(unauthorized("Malformed Authorization header; expected 'Bearer <API_KEY>'.", /^bearer\b/i.test(header)));
    }
    const accept = (keyId: number | undefined) => {
      if (keyId === undefined) return done(unauthorized('Invalid or revoked API key.', true));
      request.apiKeyId = keyId;
      done();
    };
    const found = keyIdOf(match[1]);
    if (typeof found === 'number') return accept(found);
    found.then(accept, done);
  };
}
