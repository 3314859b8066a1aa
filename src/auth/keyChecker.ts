import { findActiveKeyId } from '../db/apiKeys.js';
import { DatabaseUnavailableError, type Queryable } from '../db/index.js';
import { hashApiKey } from './keys.js';

const maxRememberedKeys = 10_000;

export interface AcceptedKey {
  keyId: number;
  keyHash: string;
}

/**
 * What the checker knows of a key without hashing it or asking the database:
 * accepted (checked within cacheSeconds), recently good (accepted once, its
 * time is up: worth one look-up even from an address over its limit), or
 * nothing.
 */
export type RememberedKey = AcceptedKey | 'recently-good' | undefined;

export interface KeyCheckerOptions {
  db: Queryable;
  /**
   * How long a key found active is trusted, and a key not found is refused,
   * without asking the database again (0: always ask).
   */
  cacheSeconds: number;
  now?: () => number;
}

export interface KeyChecker {
  /** Synchronous and without hashing: the fast path for a known key. */
  remembered(key: string): RememberedKey;
  /** Hashes the key and asks the database, unless it was refused within cacheSeconds. */
  lookUp(key: string): Promise<AcceptedKey | undefined>;
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
 * Looks keys up by hash and remembers the answer for cacheSeconds: accepted
 * keys by the key itself (answered without hashing), refused keys by hash
 * (so a flood of one wrong key costs one query, concurrent look-ups of one
 * key being shared). cacheSeconds bounds how long
 * a revoked key still passes, and how long a key tried before it was created
 * is still refused.
 */
/**
 * How long past its cacheSeconds a key accepted before is still accepted
 * while the database cannot be asked (a failover of the primary, about
 * 10 s): reads served by a replica go on for clients with a known key. No
 * key can be revoked meanwhile (revoking writes to the primary), so this
 * extends trust only across the outage.
 */
const staleWhileUnavailableMs = 60_000;

export function createKeyChecker({ db, cacheSeconds, now = Date.now }: KeyCheckerOptions): KeyChecker {
  const acceptedUntil = new Map<string, AcceptedKey & { until: number }>();
  const refusedUntil = new Map<string, number>();
  const cacheMs = cacheSeconds * 1000;
  // Concurrent requests with one key share its look-up.
  const inFlight = new Map<string, Promise<AcceptedKey | undefined>>();

  async function findAndRemember(key: string, keyHash: string): Promise<AcceptedKey | undefined> {
    let keyId: number | undefined;
    try {
      keyId = await findActiveKeyId(db, keyHash);
    } catch (error) {
      const stale = acceptedUntil.get(key);
      if (error instanceof DatabaseUnavailableError && stale && stale.until + staleWhileUnavailableMs > now()) {
        return { keyId: stale.keyId, keyHash: stale.keyHash };
      }
      throw error;
    }
    if (keyId === undefined) {
      acceptedUntil.delete(key);
      if (cacheMs > 0) setBounded(refusedUntil, keyHash, now() + cacheMs);
      return undefined;
    }
    refusedUntil.delete(keyHash);
    // Kept even with cacheSeconds 0 (expired at once): it still tells a
    // known client from a guesser.
    setBounded(acceptedUntil, key, { keyId, keyHash, until: now() + cacheMs });
    return { keyId, keyHash };
  }

  return {
    remembered(key) {
      const accepted = acceptedUntil.get(key);
      if (accepted === undefined) return undefined;
      return accepted.until > now() ? accepted : 'recently-good';
    },
    lookUp(key) {
      const keyHash = hashApiKey(key);
      const refused = refusedUntil.get(keyHash);
      if (refused !== undefined && refused > now()) return Promise.resolve(undefined);
      let lookingUp = inFlight.get(keyHash);
      if (lookingUp === undefined) {
        lookingUp = findAndRemember(key, keyHash).finally(() => inFlight.delete(keyHash));
        inFlight.set(keyHash, lookingUp);
      }
      return lookingUp;
    },
  };
}
