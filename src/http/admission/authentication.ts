import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AcceptedKey, KeyChecker, KeyRefusal } from '../../auth/keyChecker.js';
import { missingScopes, type ScopeRequirements } from '../../auth/scopes.js';
import { ApiError } from '../../errors.js';
import type { AuthFailureReason } from '../../observability/metrics.js';
import { routeOf } from '../pipeline.js';

const realm = 'Bearer realm="pets"';
// RFC 6750 b64token after a case-insensitive "Bearer" and one or more spaces.
const bearer = /^bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

function unauthorized(message: string, tokenSent: boolean, description?: string): ApiError {
  let challenge = tokenSent ? `${realm}, error="invalid_token"` : realm;
  if (description !== undefined) challenge += `, error_description="${description}"`;
  return new ApiError(401, 'unauthorized', message, { 'www-authenticate': challenge });
}

/** What a refused key is told, and the reason it is counted under. */
const refusals: Record<KeyRefusal, { error: () => ApiError; reason: AuthFailureReason }> = {
  unknown: { error: () => unauthorized('Invalid or revoked API key.', true), reason: 'invalid' },
  // RFC 6750 3: error_description, for the developer; the code stays the one for any bad token.
  expired: {
    error: () => unauthorized('The API key has expired.', true, 'The API key has expired'),
    reason: 'expired',
  },
  // A checksummed key whose checksum does not match: mistyped or made up, refused without a look-up.
  mistyped: {
    error: () => unauthorized('Invalid API key: its checksum does not match; check that it was copied whole.', true),
    reason: 'checksum',
  },
};

/** RFC 6750 3.1: a valid key without the scope the operation requires. */
function insufficientScope(operationId: string | undefined, scopes: readonly string[]): ApiError {
  const scope = scopes.join(' ');
  const which = operationId ?? 'this operation';
  return new ApiError(403, 'insufficient_scope', `This API key lacks the scope ${which} requires: ${scope}.`, {
    'www-authenticate': `${realm}, error="insufficient_scope", scope="${scope}"`,
  });
}

/**
 * Node keeps the first of several Authorization headers and drops the rest,
 * so which key counts would depend on header order; the raw headers tell.
 */
const authorizationLength = 'authorization'.length;

function authorizationHeaderCount(rawHeaders: string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index];
    // Only a name of the right length is lower-cased (a new string each): most are not.
    if (name?.length === authorizationLength && name.toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

/** RFC 6750 3.1: a request that repeats the credentials is invalid_request, 400. */
function duplicateCredentials(count: number): ApiError {
  return new ApiError(400, 'invalid_request', `Send one Authorization header; this request has ${count}.`, {
    'www-authenticate': `${realm}, error="invalid_request"`,
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    apiKeyId: number | undefined;
    /** SHA-256 of the accepted key: identifies the caller (rate limits) without holding the key. */
    apiKeyHash: string | undefined;
    /** The scopes of the accepted key; null: unrestricted. */
    apiKeyScopes: readonly string[] | null;
    /** Why the request is not authenticated, when its route needs it; thrown by requireAuthentication. */
    authFailure: ApiError | undefined;
    /** The failure's label, counted once its 401 is sent (countAuthenticationFailure). */
    authFailureReason: AuthFailureReason | undefined;
    /** A well-formed key identifyCaller could not accept from memory; verifyKey looks it up. */
    uncheckedKey: string | undefined;
    /** The unchecked key was accepted before (its cache time ran out): look it up even for an address over its limit. */
    uncheckedKeyWasGood: boolean;
  }
  interface FastifyContextConfig {
    /** Security schemes the operation requires, from openapi.yaml; empty for public routes. */
    securitySchemes?: string[];
    /** The scopes the operation's security requirements list (any one requirement suffices), from openapi.yaml. */
    requiredScopes?: ScopeRequirements;
    operationId?: string;
  }
}

/** Declares the request fields this stage fills (fastify's shape for them is set once, here). */
export function decorateAuthentication(app: FastifyInstance): void {
  app.decorateRequest('apiKeyId', undefined);
  app.decorateRequest('apiKeyHash', undefined);
  app.decorateRequest('apiKeyScopes', null);
  app.decorateRequest('authFailure', undefined);
  app.decorateRequest('authFailureReason', undefined);
  app.decorateRequest('uncheckedKey', undefined);
  app.decorateRequest('uncheckedKeyWasGood', false);
}

/** SHA-256 of the key authentication accepted, or undefined: what the rate limiter counts a caller by. */
export function acceptedKeyHash(request: FastifyRequest): string | undefined {
  return request.apiKeyHash;
}

/**
 * True when the request carries a well-formed key that is neither remembered
 * nor was recently good: the one that verifyKey will hash and look up.
 */
export function awaitsLookUpOfUnknownKey(request: FastifyRequest): boolean {
  return request.uncheckedKey !== undefined && !request.uncheckedKeyWasGood;
}

/**
 * The first step of authentication, synchronous: it reads the
 * Authorization header and accepts a key the checker remembers, without
 * hashing or a query. It runs before the body is read or validated, so a
 * request without a valid key gets 401 whatever else is wrong with it. It
 * only records the outcome; a key it cannot accept from memory is left for
 * verifyKey, after the rate limiter has refused addresses over their limit,
 * and requireAuthentication answers the failure after the attempt is counted.
 */
export function identifyCaller(checker: KeyChecker) {
  return function identifyCallerStep(request: FastifyRequest): void {
    const schemes = routeOf(request).config.securitySchemes;
    if (!schemes || schemes.length === 0) return;
    const header = request.headers.authorization;
    const headerCount = header === undefined ? 0 : authorizationHeaderCount(request.raw.rawHeaders);
    if (headerCount > 1) {
      request.authFailure = duplicateCredentials(headerCount);
      request.authFailureReason = 'duplicate';
    } else if (header === undefined || header === '') {
      request.authFailure = unauthorized("Missing API key; send it as 'Authorization: Bearer <API_KEY>'.", false);
      request.authFailureReason = 'missing';
    } else {
      const token = bearer.exec(header)?.[1];
      if (token === undefined) {
        request.authFailure = unauthorized(
          "Malformed Authorization header; expected 'Bearer <API_KEY>'.",
          /^bearer\b/i.test(header),
        );
        request.authFailureReason = 'malformed';
      } else {
        const remembered = checker.remembered(token);
        if (typeof remembered === 'object') accept(request, remembered);
        else {
          request.uncheckedKey = token;
          request.uncheckedKeyWasGood = remembered === 'recently-good';
        }
      }
    }
  };
}

function accept(request: FastifyRequest, accepted: AcceptedKey): void {
  request.apiKeyId = accepted.keyId;
  request.apiKeyHash = accepted.keyHash;
  request.apiKeyScopes = accepted.scopes;
}

/**
 * The step that hashes and looks up a key identifyCaller left unchecked.
 * Most requests carry a remembered key and pass straight through, without a
 * promise; the lookup's promise, when there is one, settles the pipeline
 * either way, so a failure anywhere in it is an error answer, never a hang.
 */
export function verifyKey(checker: KeyChecker) {
  async function lookUp(request: FastifyRequest, key: string): Promise<void> {
    const verdict = await checker.lookUp(key);
    if (typeof verdict === 'object') accept(request, verdict);
    else {
      const refusal = refusals[verdict];
      request.authFailure = refusal.error();
      request.authFailureReason = refusal.reason;
    }
  }
  return function verifyKeyStep(request: FastifyRequest): Promise<void> | undefined {
    const key = request.uncheckedKey;
    if (key === undefined) return undefined;
    request.uncheckedKey = undefined;
    return lookUp(request, key);
  };
}

/**
 * The step that answers 401 for a request authentication did not accept,
 * and 403 for a key without the scope the operation requires.
 */
export function requireAuthentication(request: FastifyRequest): void {
  if (request.authFailure) throw request.authFailure;
  if (request.apiKeyId === undefined) return;
  const { requiredScopes, operationId } = routeOf(request).config;
  const missing = requiredScopes && missingScopes(request.apiKeyScopes, requiredScopes);
  if (missing) throw insufficientScope(operationId, missing);
}

/**
 * The onResponse step that counts an authentication failure once its 401
 * was sent: a request refused for its key whose answer never went out (the
 * client too slow to send the rest of its body, cut with 408) or was
 * another (429 from the rate limiter) is not a failure of its credentials.
 */
export function countAuthenticationFailure(count: (reason: AuthFailureReason) => void) {
  return function countAuthenticationFailureStep(request: FastifyRequest, reply: FastifyReply): void {
    const reason = request.authFailureReason;
    if (reason !== undefined && reply.statusCode === 401) count(reason);
  };
}
