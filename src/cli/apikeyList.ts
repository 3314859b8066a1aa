import type { ApiKeyRecord } from '../db/apiKeys.js';

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/** One key as `list --json` shows it; an unrestricted key lists every scope the spec declares. */
export function keyAsJson(key: ApiKeyRecord, allScopes: readonly string[]) {
  return {
    name: key.name,
    scopes: key.scopes ?? [...allScopes],
    createdAt: iso(key.createdAt),
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    revokedAt: iso(key.revokedAt),
  };
}

function stateOf(key: ApiKeyRecord, now: number): string {
  if (key.revokedAt) return `revoked ${key.revokedAt.toISOString()}`;
  if (key.expiresAt && key.expiresAt.getTime() <= now) return `expired ${key.expiresAt.toISOString()}`;
  if (key.replacedAt && key.expiresAt) return `rotated, works until ${key.expiresAt.toISOString()}`;
  if (key.expiresAt) return `active until ${key.expiresAt.toISOString()}`;
  return 'active';
}

/** One key as a line of the table for people (tab-separated). */
export function keyAsLine(key: ApiKeyRecord, now: number): string {
  const scopes = key.scopes === null ? 'all scopes' : key.scopes.join(',') || 'no scope';
  const lastUsed = key.lastUsedAt ? `used ${key.lastUsedAt.toISOString()}` : 'never used';
  return [
    key.id,
    key.name,
    `sha256:${key.keyPrefix}`,
    `created ${key.createdAt.toISOString()}`,
    stateOf(key, now),
    scopes,
    lastUsed,
  ].join('\t');
}
