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

/**
 * Tells keys apart in listings: the first 8 hex digits of the key's SHA-256,
 * which say nothing about the key itself (`printf %s "$KEY" | sha256sum`).
 */
export function keyFingerprint(keyHash: string): string {
  return keyHash.slice(0, 8);
}

/** What is stored of a key: never the key itself, nor any of its characters. */
export function toStoredKey(name: string, key: string): StoredKey {
  const keyHash = hashApiKey(key);
  return { name, keyHash, keyPrefix: keyFingerprint(keyHash) };
}
