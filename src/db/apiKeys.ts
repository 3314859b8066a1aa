import type { Queryable, Statement } from './types.js';

export interface ApiKeyRecord {
  id: number;
  name: string;
  keyPrefix: string;
  /** The scopes the key is restricted to; null: unrestricted (every scope). */
  scopes: string[] | null;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  /** When a rotation replaced it under the same name (it lives on until expiresAt). */
  replacedAt: Date | null;
  revokedAt: Date | null;
}

interface ApiKeyRow {
  id: number;
  name: string;
  key_prefix: string;
  scopes: string[] | null;
  created_at: Date | string;
  expires_at: Date | string | null;
  last_used_at: Date | string | null;
  replaced_at: Date | string | null;
  revoked_at: Date | string | null;
}

const columns = 'id, name, key_prefix, scopes, created_at, expires_at, last_used_at, replaced_at, revoked_at';

// $4: the scopes (NULL: unrestricted); $5: seconds to expiry (NULL: never); $6: checksummed.
const insertKey: Statement = {
  name: 'api_keys.insert',
  text: `INSERT INTO api_keys (name, key_hash, key_prefix, scopes, expires_at, checksummed)
    VALUES ($1, $2, $3, $4::text[], now() + $5::float8 * interval '1 second', $6) RETURNING ${columns}`,
};

const insertKeyIfNew: Statement = {
  name: 'api_keys.insert_if_new',
  text: `INSERT INTO api_keys (name, key_hash, key_prefix, checksummed) VALUES ($1, $2, $3, $4)
    ON CONFLICT DO NOTHING RETURNING ${columns}`,
};

// The time left is measured by the database's clock, the one that set
// expires_at: an instance whose clock is off still ends an overlap on time.
const selectActiveByHash: Statement = {
  name: 'api_keys.active_by_hash',
  text: `SELECT id, scopes, (extract(epoch FROM expires_at - now()) * 1000)::float8 AS expires_in_ms
    FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
};

const selectAll: Statement = {
  name: 'api_keys.all',
  text: `SELECT ${columns} FROM api_keys ORDER BY id`,
};

// A rotation marks the old key replaced and stores the new one in one
// transaction, so the new key's created_at is the old one's replaced_at.
const selectListing: Statement = {
  name: 'api_keys.listing',
  text: `SELECT ${columns}, checksummed,
      (SELECT max(o.id) FROM api_keys AS o WHERE o.name = k.name AND o.replaced_at = k.created_at) AS replaces
    FROM api_keys AS k ORDER BY id`,
};

const selectNames: Statement = {
  name: 'api_keys.names',
  text: 'SELECT name FROM api_keys',
};

const revokeWithoutChecksum: Statement = {
  name: 'api_keys.revoke_without_checksum',
  text: `UPDATE api_keys SET revoked_at = now() WHERE revoked_at IS NULL AND checksummed = false RETURNING ${columns}`,
};

const countActive: Statement = {
  name: 'api_keys.count_active',
  text: 'SELECT count(*)::int AS count FROM api_keys WHERE revoked_at IS NULL',
};

const revokeByName: Statement = {
  name: 'api_keys.revoke_by_name',
  text: `UPDATE api_keys SET revoked_at = now() WHERE revoked_at IS NULL AND name = $1 RETURNING ${columns}`,
};

const revokeById: Statement = {
  name: 'api_keys.revoke_by_id',
  text: `UPDATE api_keys SET revoked_at = now() WHERE revoked_at IS NULL AND id = $1 RETURNING ${columns}`,
};

// The key a rotation replaces: the current one of the name, if still usable.
const lockCurrentByName: Statement = {
  name: 'api_keys.lock_current_by_name',
  text: `SELECT ${columns} FROM api_keys
    WHERE name = $1 AND replaced_at IS NULL AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
    FOR UPDATE`,
};

// The overlap never lengthens a key's life: an earlier expiry stays.
const markReplaced: Statement = {
  name: 'api_keys.mark_replaced',
  text: `UPDATE api_keys
    SET replaced_at = now(), expires_at = least(coalesce(expires_at, 'infinity'), now() + $2::float8 * interval '1 second')
    WHERE id = $1 RETURNING ${columns}`,
};

// One statement per flush, whatever the number of keys used; a later use
// written first (another instance) is never moved back.
const recordUses: Statement = {
  name: 'api_keys.record_uses',
  text: `UPDATE api_keys AS k SET last_used_at = greatest(k.last_used_at, u.used_at)
    FROM unnest($1::bigint[], $2::timestamptz[]) AS u(id, used_at) WHERE k.id = u.id`,
};

const toDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));
const toDateOrNull = (value: Date | string | null) => (value === null ? null : toDate(value));

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.key_prefix,
    scopes: row.scopes,
    createdAt: toDate(row.created_at),
    expiresAt: toDateOrNull(row.expires_at),
    lastUsedAt: toDateOrNull(row.last_used_at),
    replacedAt: toDateOrNull(row.replaced_at),
    revokedAt: toDateOrNull(row.revoked_at),
  };
}

export interface StoredKey {
  name: string;
  keyHash: string;
  keyPrefix: string;
  /** Whether the key ends in its checksum. */
  checksummed: boolean;
}

export interface KeyTerms {
  /** The scopes to restrict the key to; absent: unrestricted. */
  scopes?: readonly string[];
  /** Seconds from now until the key expires; absent: never. */
  expiresInSeconds?: number;
}

export async function insertApiKey(db: Queryable, key: StoredKey, terms: KeyTerms = {}): Promise<ApiKeyRecord> {
  const { rows } = await db.query<ApiKeyRow>(insertKey, [
    key.name,
    key.keyHash,
    key.keyPrefix,
    terms.scopes ?? null,
    terms.expiresInSeconds ?? null,
    key.checksummed,
  ]);
  if (!rows[0]) throw new Error('INSERT ... RETURNING returned no row');
  return toApiKey(rows[0]);
}

/** Inserts the key unless its name or hash is already stored; returns it when inserted. */
export async function insertApiKeyIfNew(db: Queryable, key: StoredKey): Promise<ApiKeyRecord | undefined> {
  const { rows } = await db.query<ApiKeyRow>(insertKeyIfNew, [key.name, key.keyHash, key.keyPrefix, key.checksummed]);
  return rows[0] && toApiKey(rows[0]);
}

export interface ActiveKey {
  id: number;
  scopes: string[] | null;
  /** Milliseconds until it expires, by the database's clock (0 or less: expired); null: never. */
  expiresInMs: number | null;
}

/** The key with this hash unless revoked, expired or not. */
export async function findActiveKey(db: Queryable, keyHash: string): Promise<ActiveKey | undefined> {
  const { rows } = await db.query<{ id: number; scopes: string[] | null; expires_in_ms: number | null }>(
    selectActiveByHash,
    [keyHash],
  );
  const row = rows[0];
  return row && { id: row.id, scopes: row.scopes, expiresInMs: row.expires_in_ms };
}

export async function listApiKeys(db: Queryable): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<ApiKeyRow>(selectAll);
  return rows.map(toApiKey);
}

/** A key as `apikey list` shows it: the record, its format, and the key a rotation replaced with it. */
export interface ListedApiKey extends ApiKeyRecord {
  /** Whether the key ends in a checksum; null: not known (stored before the format was recorded). */
  checksummed: boolean | null;
  /** The id of the key this one replaced in a rotation; null: none. */
  replaces: number | null;
}

export async function listApiKeysWithHistory(db: Queryable): Promise<ListedApiKey[]> {
  const { rows } = await db.query<ApiKeyRow & { checksummed: boolean | null; replaces: number | null }>(selectListing);
  return rows.map((row) => ({ ...toApiKey(row), checksummed: row.checksummed, replaces: row.replaces }));
}

/** Every name a key has (revoked and replaced ones too). */
export async function listApiKeyNames(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(selectNames);
  return rows.map((row) => row.name);
}

/** Revokes every active key known to have no checksum; returns them. */
export async function revokeApiKeysWithoutChecksum(db: Queryable): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<ApiKeyRow>(revokeWithoutChecksum);
  return rows.map(toApiKey);
}

export async function countActiveApiKeys(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ count: number }>(countActive);
  return rows[0]?.count ?? 0;
}

/** Revokes every active key with this name (a rotated one in its overlap too); returns them, by id. */
export async function revokeApiKeyByName(db: Queryable, name: string): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<ApiKeyRow>(revokeByName, [name]);
  return rows.map(toApiKey).sort((a, b) => a.id - b.id);
}

/** Revokes the active key with this id; returns it when there was one. */
export async function revokeApiKeyById(db: Queryable, id: number): Promise<ApiKeyRecord | undefined> {
  const { rows } = await db.query<ApiKeyRow>(revokeById, [id]);
  return rows[0] && toApiKey(rows[0]);
}

/** Locks and returns the usable, not yet replaced key with this name (inside a transaction). */
export async function lockCurrentApiKey(tx: Queryable, name: string): Promise<ApiKeyRecord | undefined> {
  const { rows } = await tx.query<ApiKeyRow>(lockCurrentByName, [name]);
  return rows[0] && toApiKey(rows[0]);
}

/** Marks the key replaced; it expires when the overlap ends (or earlier, if it was due to). */
export async function markApiKeyReplaced(tx: Queryable, id: number, overlapSeconds: number): Promise<ApiKeyRecord> {
  const { rows } = await tx.query<ApiKeyRow>(markReplaced, [id, overlapSeconds]);
  if (!rows[0]) throw new Error(`api key ${id} vanished while locked`);
  return toApiKey(rows[0]);
}

export interface KeyUse {
  keyId: number;
  usedAt: Date;
}

/** Writes the last use of many keys in one statement. */
export async function recordApiKeyUses(db: Queryable, uses: readonly KeyUse[]): Promise<void> {
  if (uses.length === 0) return;
  await db.query(recordUses, [uses.map((use) => use.keyId), uses.map((use) => use.usedAt.toISOString())]);
}
