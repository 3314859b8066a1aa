import {
  countActiveApiKeys,
  insertApiKey,
  insertApiKeyIfNew,
  lockCurrentApiKey,
  markApiKeyReplaced,
  type ApiKeyRecord,
  type KeyTerms,
} from '../db/apiKeys.js';
import type { Database } from '../db/index.js';
import { generateApiKey, hashApiKey, toStoredKey } from './keys.js';

/**
 * Stores BOOTSTRAP_API_KEY (hashed) unless it is there already. Its name is
 * derived from its hash, so restarts with the same key change nothing and a
 * new bootstrap key sits beside the old one until that is revoked.
 */
export async function storeBootstrapKey(db: Database, key: string): Promise<void> {
  const name = `bootstrap-${hashApiKey(key).slice(0, 8)}`;
  await insertApiKeyIfNew(db, toStoredKey(name, key));
}

/** Creates a first key when none is active; returns it (to be shown once) or undefined. */
export async function createFirstKeyIfNone(db: Database): Promise<string | undefined> {
  return db.transaction(async (tx) => {
    if ((await countActiveApiKeys(tx)) > 0) return undefined;
    const key = generateApiKey();
    await insertApiKey(tx, toStoredKey(`default-${Date.now()}`, key));
    return key;
  });
}

export interface IssuedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  record: ApiKeyRecord;
}

/** A new key under this name, restricted and expiring as the terms say. */
export async function issueKey(db: Database, name: string, terms: KeyTerms = {}): Promise<IssuedKey> {
  const key = generateApiKey();
  return { key, record: await insertApiKey(db, toStoredKey(name, key), terms) };
}

export interface Rotation extends IssuedKey {
  /** The key replaced: it works until its expiresAt, the end of the overlap. */
  replaced: ApiKeyRecord;
}

/** How long a key was given when issued, in seconds, or undefined for a key that never expires. */
function lifetimeSeconds(key: ApiKeyRecord): number | undefined {
  if (key.expiresAt === null) return undefined;
  return Math.max(0, (key.expiresAt.getTime() - key.createdAt.getTime()) / 1000);
}

/**
 * Replaces the current key of this name with a new one of the same scopes
 * and lifetime (unless expiresInSeconds says otherwise); the old key keeps
 * working for overlapSeconds, so consumers can move over without a failed
 * request. Undefined when the name has no usable key.
 */
export async function rotateKey(
  db: Database,
  name: string,
  overlapSeconds: number,
  expiresInSeconds?: number,
): Promise<Rotation | undefined> {
  return db.transaction(async (tx) => {
    const current = await lockCurrentApiKey(tx, name);
    if (!current) return undefined;
    const replaced = await markApiKeyReplaced(tx, current.id, overlapSeconds);
    const key = generateApiKey();
    const lifetime = expiresInSeconds ?? lifetimeSeconds(current);
    const record = await insertApiKey(tx, toStoredKey(name, key), {
      ...(current.scopes ? { scopes: current.scopes } : {}),
      ...(lifetime === undefined ? {} : { expiresInSeconds: lifetime }),
    });
    return { key, record, replaced };
  });
}
