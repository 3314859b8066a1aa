import { createHash } from 'node:crypto';
import type { Database, Queryable } from '../db/index.js';
import type { OperationId } from './types.js';
import { findStoredKey, storeKey, tryLockKey, type KeyScope, type StoredAnswer } from '../db/idempotencyKeys.js';

/**
 * JSON with object keys sorted at every level: equal parsed bodies give equal text. Recursive, which is
 * safe: a body reaches it parsed, so at most maxJsonDepth deep (src/http/operations/jsonDepth.ts).
 */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What identifies a request body: its parsed value, so key order and spacing do not count. */
export function fingerprintOf(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/** The request a key is sent with: its operation and path parameters. */
export interface RequestTarget {
  operation: OperationId;
  params: Record<string, unknown>;
}

/**
 * Why a key cannot be used now: it is in flight elsewhere, or was first used
 * with another body, operation or parent.
 */
export type KeyRefusal = 'in_use' | 'reused';

/**
 * The answer, and whether it is the stored one of an earlier request. With
 * work that may find nothing to act on (A includes undefined), undefined:
 * nothing was done or stored.
 */
export type IdempotentOutcome<A extends StoredAnswer | undefined = StoredAnswer> =
  { refused?: undefined; answer: A | StoredAnswer; replayed: boolean } | { refused: KeyRefusal };

/**
 * Runs `work` at most once per (API key, Idempotency-Key) within ttlSeconds:
 * the answer is stored in the transaction that does the work, so either both
 * are committed or neither. A key in flight elsewhere, or the same key with
 * another body or at another target (operation or path parameters), is refused (the
 * handler answers 409 or 422); a failure stores nothing. A key whose answer a release
 * before migration 0011 stored has no target the database gives back (0012), and is
 * judged by its body alone.
 *
 * The stored answer is looked for before `work` runs, so a retry gets it even
 * when what the request acted on is gone since (the parent of what it made,
 * say). `work` answers undefined when it finds nothing to act on: nothing is
 * stored, so the key stays free (the handler answers 404).
 */
export async function runIdempotently<A extends StoredAnswer | undefined>(
  db: Database,
  scope: KeyScope,
  request: { target: RequestTarget; body: unknown; ttlSeconds: number },
  work: (tx: Queryable) => Promise<A>,
): Promise<IdempotentOutcome<A>> {
  const fingerprint = fingerprintOf(request.body);
  const target = canonicalJson(request.target);
  return db.transaction(async (tx) => {
    if (!(await tryLockKey(tx, scope))) return { refused: 'in_use' };
    // Read after taking the lock: a request that held it has committed or rolled back by now.
    const stored = await findStoredKey(tx, scope);
    if (stored && !stored.expired) {
      const otherTarget = stored.target !== null && stored.target !== target;
      if (otherTarget || stored.fingerprint !== fingerprint) return { refused: 'reused' };
      return { answer: stored, replayed: true };
    }
    const answer = await work(tx);
    if (answer !== undefined) await storeKey(tx, scope, { fingerprint, target }, answer, request.ttlSeconds);
    return { answer, replayed: false };
  });
}
