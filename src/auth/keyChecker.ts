import { findActiveKey, type ActiveKey } from '../db/apiKeys.js';
import { DatabaseUnavailableError, type KeyChange, type KeyChangeFeed, type Queryable } from '../db/index.js';
import type { KeyUseRecorder } from './keyUse.js';
import { checksumVerdict, hashApiKey } from './keys.js';

const maxRememberedKeys = 10_000;

export interface AcceptedKey {
  keyId: number;
  keyHash: string;
  /** The scopes the key is restricted to; null: every scope. */
  scopes: readonly string[] | null;
  /** Milliseconds since the epoch after which the key is refused; null: never. */
  expiresAt: number | null;
}

/**
 * Why a key was refused: not stored or revoked (unknown), past its expiry or
 * the end of its rotation's overlap (expired), or a checksummed key whose
 * checksum does not match, refused without a look-up (mistyped).
 */
export type KeyRefusal = 'unknown' | 'expired' | 'mistyped';

/**
 * What the checker knows of a key without hashing it or asking the database:
 * accepted (checked within cacheSeconds, not expired), recently good
 * (accepted once, its time is up: worth one look-up even from an address
 * over its limit), or nothing.
 */
export type RememberedKey = AcceptedKey | 'recently-good' | undefined;

export interface KeyCheckerOptions {
  db: Queryable;
  /**
   * How long a key found active is trusted, and a key not found is refused,
   * without asking the database again (0: always ask). A key's expiry is
   * judged on every use, whatever is cached.
   */
  cacheSeconds: number;
  now?: () => number;
  /** Told of every accepted use (in memory; it writes them in batches). */
  uses?: Pick<KeyUseRecorder, 'record'>;
  /**
   * The database's announcements of key changes: a key revoked, rotated or
   * cut short is forgotten at once. Without them (or while they are not
   * heard) cacheSeconds is the bound.
   */
  changes?: KeyChangeFeed;
}

export interface KeyChecker {
  /** Synchronous and without hashing: the fast path for a known key. */
  remembered(key: string): RememberedKey;
  /** Hashes the key and asks the database, unless it was refused within cacheSeconds or its checksum is wrong. */
  lookUp(key: string): Promise<AcceptedKey | KeyRefusal>;
  /** Forgets a key that changed (by id), or every key; the next use looks it up. */
  forget(change: KeyChange): void;
  /** Stops hearing key changes. */
  close(): void;
}

/** Forgets the oldest entry when a map is full, so floods of distinct keys cost bounded memory. */
function setBounded<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  if (map.size >= maxRememberedKeys) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(key, value);
}

/**
 * How long past its cacheSeconds a key accepted before is still accepted
 * while the database cannot be asked (a switchover of the primary, about
 * 10 s): reads served by a replica go on for clients with a known key.
 * Only while key changes are heard (the listening connection is up, so a
 * revocation would have reached this instance and the key been forgotten):
 * when they are not, cacheSeconds stays the bound and the look-up's failure
 * is the answer. Never past the key's expiry.
 */
const staleWhileUnavailableMs = 60_000;

const expiredAt = (key: { expiresAt: number | null }, at: number) => key.expiresAt !== null && key.expiresAt <= at;

/**
 * The key as this instance remembers it: its expiry moved onto this
 * instance's clock from the time the database says is left, so the end of
 * an overlap does not move with the instance's clock error.
 */
function toAccepted(found: ActiveKey, keyHash: string, at: number): AcceptedKey {
  const expiresAt = found.expiresInMs === null ? null : at + found.expiresInMs;
  return { keyId: found.id, keyHash, scopes: found.scopes, expiresAt };
}

/**
 * Looks keys up by hash and remembers the answer for cacheSeconds: accepted
 * keys by the key itself (answered without hashing), refused keys by hash
 * (so a flood of one wrong key costs one query, concurrent look-ups of one
 * key being shared). cacheSeconds bounds how long a revoked key still
 * passes, and how long a key tried before it was created is still refused.
 */
export function createKeyChecker({ db, cacheSeconds, now = Date.now, uses, changes }: KeyCheckerOptions): KeyChecker {
  const acceptedUntil = new Map<string, AcceptedKey & { until: number }>();
  const refusedUntil = new Map<string, { until: number; refusal: KeyRefusal }>();
  const cacheMs = cacheSeconds * 1000;
  // Concurrent requests with one key share its look-up.
  const inFlight = new Map<string, Promise<AcceptedKey | KeyRefusal>>();
  // Counts the changes heard: a look-up that overlapped one may have read
  // the key as it was before, and is answered but not remembered.
  let changesHeard = 0;

  function used(accepted: AcceptedKey): AcceptedKey {
    uses?.record(accepted.keyId);
    return accepted;
  }

  function refuse(key: string, keyHash: string, refusal: KeyRefusal): KeyRefusal {
    acceptedUntil.delete(key);
    if (cacheMs > 0) setBounded(refusedUntil, keyHash, { until: now() + cacheMs, refusal });
    return refusal;
  }

  async function findAndRemember(key: string, keyHash: string): Promise<AcceptedKey | KeyRefusal> {
    const heardBefore = changesHeard;
    // Before the query: the time left is counted from no later than the database measured it.
    const askedAt = now();
    let found: ActiveKey | undefined;
    try {
      found = await findActiveKey(db, keyHash);
    } catch (error) {
      const stale = acceptedUntil.get(key);
      const at = now();
      if (
        error instanceof DatabaseUnavailableError &&
        stale &&
        stale.until + (changes?.live() ? staleWhileUnavailableMs : 0) > at &&
        !expiredAt(stale, at)
      ) {
        const { until: _until, ...accepted } = stale;
        return used(accepted);
      }
      throw error;
    }
    if (found === undefined) return refuse(key, keyHash, 'unknown');
    if (found.expiresInMs !== null && found.expiresInMs <= 0) return refuse(key, keyHash, 'expired');
    const accepted = toAccepted(found, keyHash, askedAt);
    refusedUntil.delete(keyHash);
    if (heardBefore !== changesHeard) return used(accepted);
    // Kept even with cacheSeconds 0 (expired at once): it still tells a
    // known client from a guesser.
    setBounded(acceptedUntil, key, { ...accepted, until: now() + cacheMs });
    return used(accepted);
  }

  function forget(change: KeyChange): void {
    changesHeard += 1;
    if (change === 'all') {
      acceptedUntil.clear();
      // A key created while changes were not heard may be remembered as refused.
      refusedUntil.clear();
      return;
    }
    for (const [key, accepted] of acceptedUntil) if (accepted.keyId === change.keyId) acceptedUntil.delete(key);
  }
  const stopHearing = changes?.subscribe(forget);

  return {
    forget,
    close: () => stopHearing?.(),
    remembered(key) {
      const accepted = acceptedUntil.get(key);
      if (accepted === undefined) return undefined;
      const at = now();
      // Past its expiry the key is looked up, and refused there with its reason.
      if (expiredAt(accepted, at)) return 'recently-good';
      if (accepted.until <= at) return 'recently-good';
      return used(accepted);
    },
    lookUp(key) {
      // No hash, no query: a mistyped key can never match a stored one.
      if (checksumVerdict(key) === 'mismatch') return Promise.resolve('mistyped');
      const keyHash = hashApiKey(key);
      const refused = refusedUntil.get(keyHash);
      if (refused !== undefined && refused.until > now()) return Promise.resolve(refused.refusal);
      let lookingUp = inFlight.get(keyHash);
      if (lookingUp === undefined) {
        lookingUp = findAndRemember(key, keyHash).finally(() => inFlight.delete(keyHash));
        inFlight.set(keyHash, lookingUp);
      }
      return lookingUp;
    },
  };
}
