import { createHash, randomBytes } from 'node:crypto';
import type { StoredKey } from '../db/apiKeys.js';

/** Every key this service issues starts with this, so leaked keys are recognisable. */
export const keyPrefix = 'pets_';

/** A new key: the prefix and 256 random bits, base64url. */
export function generateApiKey(): string {
  return keyPrefix + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What is stored of a key: never the key itself. */
export function toStoredKey(name: string, key: string): StoredKey {
  return { name, keyHash: hashApiKey(key), keyPrefix: key.slice(0, keyPrefix.length + 6) };
}
