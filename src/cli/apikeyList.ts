import type { ListedApiKey } from '../db/apiKeys.js';

/**
 * What a stored time is shown as when it has no JavaScript Date (past year
 * 275760, which PostgreSQL stores): the row is still listed, and revocable.
 */
const outOfRange = 'out of range';

const iso = (date: Date | null) =>
  date === null ? null : Number.isNaN(date.getTime()) ? outOfRange : date.toISOString();

/** Every scope, including scopes the spec gains later: what a key created without --scopes holds. */
const unrestricted = '*';

function formatOf(key: ListedApiKey): 'checksummed' | 'legacy' | 'unknown' {
  if (key.checksummed === null) return 'unknown';
  return key.checksummed ? 'checksummed' : 'legacy';
}

const fingerprintOf = (key: ListedApiKey) => `sha256:${key.keyPrefix}`;

/** One key as `list --json` shows it; an unrestricted key's scopes are ["*"]. */
export function keyAsJson(key: ListedApiKey) {
  return {
    id: key.id,
    name: key.name,
    fingerprint: fingerprintOf(key),
    format: formatOf(key),
    scopes: key.scopes ?? [unrestricted],
    createdAt: iso(key.createdAt),
    expiresAt: iso(key.expiresAt),
    lastUsedAt: iso(key.lastUsedAt),
    revokedAt: iso(key.revokedAt),
    replaces: key.replaces,
  };
}

function stateOf(key: ListedApiKey, now: number): string {
  if (key.revokedAt) return `revoked ${iso(key.revokedAt)}`;
  const expiresAt = iso(key.expiresAt);
  if (key.expiresAt && key.expiresAt.getTime() <= now) return `expired ${expiresAt}`;
  if (key.replacedAt && key.expiresAt) return `rotated, works until ${expiresAt}`;
  if (key.expiresAt) return `active until ${expiresAt}`;
  return 'active';
}

/** The header of the table for people. */
export const listHeader = [
  'id',
  'name',
  'fingerprint',
  'format',
  'created',
  'state',
  'scopes',
  'last use',
  'replaces',
].join('\t');

/** One key as a line of the table for people (tab-separated). */
export function keyAsLine(key: ListedApiKey, now: number): string {
  const scopes = key.scopes === null ? unrestricted : key.scopes.join(',') || 'no scope';
  const lastUsed = key.lastUsedAt ? `used ${iso(key.lastUsedAt)}` : 'never used';
  return [
    key.id,
    key.name,
    fingerprintOf(key),
    formatOf(key),
    `created ${iso(key.createdAt)}`,
    stateOf(key, now),
    scopes,
    lastUsed,
    key.replaces ?? '-',
  ].join('\t');
}
