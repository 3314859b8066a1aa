import { int8ToNumber } from './int8.js';
import type { Queryable, Statement } from './types.js';

export interface ApiKeyRecord {
  id: number;
  name: string;
  keyPrefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}

interface ApiKeyRow {
  id: string;
  name: string;
  key_prefix: string;
  created_at: Date | string;
  revoked_at: Date | string | null;
}

const columns = 'id, name, key_prefix, created_at, revoked_at';

const insertKey: Statement = {
  name: 'api_keys.insert',
  text: `INSERT INTO api_keys (name, key_hash, key_prefix) VALUES ($1, $2, $3) RETURNING ${columns}`,
};

const insertKeyIfNew: Statement = {
  name: 'api_keys.insert_if_new',
  text: `INSERT INTO api_keys (name, key_hash, key_prefix) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING ${columns}`,
};

const selectActiveByHash: Statement = {
  name: 'api_keys.active_by_hash',
  text: 'SELECT id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
};

const selectAll: Statement = {
  name: 'api_keys.all',
  text: `SELECT ${columns} FROM api_keys ORDER BY id`,
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

const toDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));

function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: int8ToNumber(row.id),
    name: row.name,
    keyPrefix: row.key_prefix,
    createdAt: toDate(row.created_at),
    revokedAt: row.revoked_at === null ? null : toDate(row.revoked_at),
  };
}

export interface StoredKey {
  name: string;
  keyHash: string;
  keyPrefix: string;
}

export async function insertApiKey(db: Queryable, key: StoredKey): Promise<ApiKeyRecord> {
  const { rows } = await db.query<ApiKeyRow>(insertKey, [key.name, key.keyHash, key.keyPrefix]);
  if (!rows[0]) throw new Error('INSERT ... RETURNING returned no row');
  return toApiKey(rows[0]);
}

/** Inserts the key unless its name or hash is already stored; returns it when inserted. */
export async function insertApiKeyIfNew(db: Queryable, key: StoredKey): Promise<ApiKeyRecord | undefined> {
  const { rows } = await db.query<ApiKeyRow>(insertKeyIfNew, [key.name, key.keyHash, key.keyPrefix]);
  return rows[0] && toApiKey(rows[0]);
}

/** The id of the active key with this hash, if any. */
export async function findActiveKeyId(db: Queryable, keyHash: string): Promise<number | undefined> {
  const { rows } = await db.query<{ id: string }>(selectActiveByHash, [keyHash]);
  return rows[0] && int8ToNumber(rows[0].id);
}

export async function listApiKeys(db: Queryable): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<ApiKeyRow>(selectAll);
  return rows.map(toApiKey);
}

export async function countActiveApiKeys(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ count: number }>(countActive);
  return rows[0]?.count ?? 0;
}

/** Revokes the active key with this name; returns it when there was one. */
export async function revokeApiKeyByName(db: Queryable, name: string): Promise<ApiKeyRecord | undefined> {
  const { rows } = await db.query<ApiKeyRow>(revokeByName, [name]);
  return rows[0] && toApiKey(rows[0]);
}

/** Revokes the active key with this id; returns it when there was one. */
export async function revokeApiKeyById(db: Queryable, id: number): Promise<ApiKeyRecord | undefined> {
  const { rows } = await db.query<ApiKeyRow>(revokeById, [id]);
  return rows[0] && toApiKey(rows[0]);
}
