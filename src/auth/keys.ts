import { createHash, randomBytes } from 'node:crypto';
import type { StoredKey } from '../db/apiKeys.js';
import { crc32 } from './crc32.js';
import { weakSecretReason } from './keyStrength.js';

/** Every key this service issues starts with this, so leaked keys are recognisable. */
export const keyPrefix = 'pets_';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 43 base62 characters carry 256 bits (62^43 > 2^256). */
const randomLength = 43;
/** A CRC-32 (below 2^32) fits in 6 base62 characters (62^6 > 2^32). */
export const checksumLength = 6;
/**
 * The shape of a checksummed key: the prefix, 43 random and 6 checksum
 * characters, all base62. Keys issued before the checksum (the prefix and
 * 43 base64url characters) never have it: they are 6 characters shorter.
 */
const checksummedShape = new RegExp(`^${keyPrefix}[0-9A-Za-z]{${randomLength + checksumLength}}$`);

/** Uniform base62 characters: bytes of 248 and above are dropped, so that byte % 62 favours no character. */
function randomBase62(length: number): string {
  let text = '';
  while (text.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && text.length < length) text += base62.charAt(byte % 62);
    }
  }
  return text;
}

/** The checksum of a key's body (prefix and random part): its CRC-32 in base62, zero-padded to 6 characters. */
export function keyChecksum(body: string): string {
  let value = crc32(Buffer.from(body, 'utf8'));
  let digits = '';
  for (let index = 0; index < checksumLength; index += 1) {
    digits = base62.charAt(value % 62) + digits;
    value = Math.floor(value / 62);
  }
  return digits;
}

/** A new key: the prefix, 256 random bits in base62, and the checksum of both. */
export function generateApiKey(): string {
  const body = keyPrefix + randomBase62(randomLength);
  return body + keyChecksum(body);
}

/**
 * How a key's format judges it, without a look-up: a checksummed key whose
 * checksum does not match is mistyped (or made up) and can never be valid;
 * any other token may be a key issued before the checksum, or a bootstrap key.
 */
export function checksumVerdict(key: string): 'matches' | 'mismatch' | 'none' {
  if (!checksummedShape.test(key)) return 'none';
  const body = key.slice(0, -checksumLength);
  return keyChecksum(body) === key.slice(-checksumLength) ? 'matches' : 'mismatch';
}

/** Whether the key carries a checksum that matches: the format `list` calls checksummed, any other legacy. */
export function isChecksummed(key: string): boolean {
  return checksumVerdict(key) === 'matches';
}

/**
 * The fewest characters of a bootstrap key's secret part (without the
 * public `pets_`): 32 characters are 128 bits even in hex, the least a
 * secret that anyone may try against the API needs, and 192 bits in base64.
 */
export const minForeignKeyLength = 32;
/**
 * Why a key may not be a bootstrap key, or undefined. One of the checksummed
 * shape must carry its checksum (a mistyped one could never be used); its
 * body is then judged like any other secret, since the checksum is public
 * and proves nothing of how the key was made. Any other key must have at
 * least minForeignKeyLength characters after any public prefix. The secret
 * must then cost enough guesses to an estimator that knows repetition,
 * sequences, keyboard walks and dictionary words (keyStrength.ts).
 */
export function bootstrapKeyProblem(key: string): string | undefined {
  const make = 'make one with npm run apikey -- new';
  const verdict = checksumVerdict(key);
  if (verdict === 'mismatch')
    return `has the shape of a key of this service but its checksum does not match: copy the whole key, or ${make}`;
  const secret =
    verdict === 'matches'
      ? key.slice(keyPrefix.length, -checksumLength)
      : key.startsWith(keyPrefix)
        ? key.slice(keyPrefix.length)
        : key;
  if (secret.length < minForeignKeyLength)
    return `is too easy to guess: use at least ${minForeignKeyLength} random characters after any ${keyPrefix}, or ${make}`;
  const weakness = weakSecretReason(secret);
  if (weakness !== undefined) return `is too easy to guess: ${weakness}; use random characters, or ${make}`;
  return undefined;
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
  return { name, keyHash, keyPrefix: keyFingerprint(keyHash), checksummed: isChecksummed(key) };
}
