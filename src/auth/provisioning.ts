import {
  countActiveApiKeys,
  insertApiKey,
  insertApiKeyIfNew,
  listApiKeyNames,
  lockCurrentApiKey,
  markApiKeyReplaced,
  type ApiKeyRecord,
  type KeyTerms,
} from '../db/apiKeys.js';
import type { Database, Queryable } from '../db/index.js';
import { bootstrapKeyProblem, generateApiKey, hashApiKey, toStoredKey } from './keys.js';

/** A BOOTSTRAP_API_KEY that may not be stored: the message names the variable. */
export class BootstrapKeyError extends Error {
  override name = 'BootstrapKeyError';
}

/** Refuses a BOOTSTRAP_API_KEY that is mistyped or guessable, in one line naming the variable. */
export function assertBootstrapKeyUsable(key: string): void {
  const problem = bootstrapKeyProblem(key);
  if (problem !== undefined) throw new BootstrapKeyError(`Invalid configuration: BOOTSTRAP_API_KEY ${problem}.`);
}

/**
 * Stores BOOTSTRAP_API_KEY (hashed) unless it is there already. Its name is
 * derived from its hash, so restarts with the same key change nothing and a
 * new bootstrap key sits beside the old one until that is revoked.
 */
export async function storeBootstrapKey(db: Database, key: string): Promise<void> {
  assertBootstrapKeyUsable(key);
  const name = `bootstrap-${hashApiKey(key).slice(0, 8)}`;
  await insertApiKeyIfNew(db, toStoredKey(name, key));
}

/** The name of the first key: `default`, or `default-2`, `-3`... when a key had it before (revoked now). */
async function firstKeyName(tx: Queryable): Promise<string> {
  const taken = new Set(await listApiKeyNames(tx));
  let name = 'default';
  for (let suffix = 2; taken.has(name); suffix += 1) name = `default-${suffix}`;
  return name;
}

/** Creates a first key when none is active; returns it (to be shown once) or undefined. */
export async function createFirstKeyIfNone(db: Database): Promise<string | undefined> {
  return db.transaction(async (tx) => {
    if ((await countActiveApiKeys(tx)) > 0) return undefined;
    const key = generateApiKey();
    await insertApiKey(tx, toStoredKey(await firstKeyName(tx), key));
    return key;
  });
}

export interface IssuedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  record: ApiKeyRecord;
}

/**
 * A new key under this name, restricted and expiring as the terms say.
 * `present` turns it into what is shown (the key, once) inside the
 * transaction: if it throws, nothing is stored, so a key is never stored
 * without being shown.
 */
export async function issueKey(db: Database, name: string, terms?: KeyTerms): Promise<IssuedKey>;
export async function issueKey<T>(
  db: Database,
  name: string,
  terms: KeyTerms,
  present: (issued: IssuedKey) => T,
): Promise<T>;
export async function issueKey<T>(
  db: Database,
  name: string,
  terms: KeyTerms = {},
  present?: (issued: IssuedKey) => T,
): Promise<T | IssuedKey> {
  return db.transaction(async (tx) => {
    const key = generateApiKey();
    const issued = { key, record: await insertApiKey(tx, toStoredKey(name, key), terms) };
    return present ? present(issued) : issued;
  });
}

export interface Rotation extends IssuedKey {
  /** The key replaced: it works until its expiresAt, the end of the overlap. */
  replaced: ApiKeyRecord;
}

/** How long a key was given when issued, in seconds, or undefined for a key that never expires. */
export function lifetimeSeconds(key: ApiKeyRecord): number | undefined {
  if (key.expiresAt === null) return undefined;
  return Math.max(0, (key.expiresAt.getTime() - key.createdAt.getTime()) / 1000);
}

export interface RotationTerms {
  overlapSeconds: number;
  /** The new key's lifetime; undefined: the old key's (checked by `present`, which may refuse it). */
  expiresInSeconds?: number;
  /** Judges the lifetime the new key would inherit; throwing refuses the rotation. */
  checkInherited?: (seconds: number | undefined, current: ApiKeyRecord) => void;
}

/**
 * Replaces the current key of this name with a new one of the same scopes
 * and lifetime (unless expiresInSeconds says otherwise); the old key keeps
 * working for overlapSeconds, so consumers can move over without a failed
 * request. Undefined when the name has no usable key. As with issueKey,
 * `present` runs before the commit: if it throws, nothing changes.
 */
export async function rotateKey<T>(
  db: Database,
  name: string,
  terms: RotationTerms,
  present: (rotation: Rotation) => T,
): Promise<T | undefined> {
  return db.transaction(async (tx) => {
    const current = await lockCurrentApiKey(tx, name);
    if (!current) return undefined;
    let lifetime = terms.expiresInSeconds;
    if (lifetime === undefined) {
      lifetime = lifetimeSeconds(current);
      terms.checkInherited?.(lifetime, current);
    }
    const replaced = await markApiKeyReplaced(tx, current.id, terms.overlapSeconds);
    const key = generateApiKey();
    const record = await insertApiKey(tx, toStoredKey(name, key), {
      ...(current.scopes ? { scopes: current.scopes } : {}),
      ...(lifetime === undefined ? {} : { expiresInSeconds: lifetime }),
    });
    return present({ key, record, replaced });
  });
}
