import type { Queryable, Statement } from './types.js';

/** The answer stored for an idempotency key, as first sent. */
export interface StoredAnswer {
  status: number;
  body: string;
  location: string;
}

export interface StoredKey extends StoredAnswer {
  fingerprint: string;
  /** The request the key answered (operation and path parameters); null when its answer was stored by a release before 0011. */
  target: string | null;
  /** Past the expiry stored with it: as good as absent, and overwritten by the next use. */
  expired: boolean;
}

export interface KeyScope {
  apiKeyId: number;
  key: string;
}

interface KeyRow {
  fingerprint: string;
  request_target: string | null;
  response_status: number;
  response_body: string;
  location: string;
  expired: boolean;
}

// A transaction-scoped lock, so that it ends with the transaction, whether
// it commits, rolls back or its connection dies; works through a pooler in
// transaction mode. 64-bit hash of the scope: a collision costs a 409, never
// a wrong replay.
const tryLock: Statement = {
  name: 'idempotency.try_lock',
  text: "SELECT pg_try_advisory_xact_lock(hashtextextended($1::bigint::text || ':' || $2::text, 0)) AS locked",
};

// A target is read only when it was written with the row's answer (0012):
// an older release's overwrite changes created_at and leaves both alone.
const select: Statement = {
  name: 'idempotency.select',
  text:
    'SELECT fingerprint, CASE WHEN target_written_at = created_at THEN request_target END AS request_target, ' +
    'response_status, response_body, location, expires_at <= now() AS expired ' +
    'FROM idempotency_keys WHERE api_key_id = $1 AND key = $2',
};

const upsert: Statement = {
  name: 'idempotency.upsert',
  text:
    'INSERT INTO idempotency_keys ' +
    '(api_key_id, key, fingerprint, request_target, response_status, response_body, location, expires_at, ' +
    'created_at, target_written_at) ' +
    'VALUES ($1, $2, $3, $8, $4, $5, $6, now() + make_interval(secs => $7), now(), now()) ' +
    'ON CONFLICT (api_key_id, key) DO UPDATE SET ' +
    'fingerprint = EXCLUDED.fingerprint, request_target = EXCLUDED.request_target, response_status = EXCLUDED.response_status, ' +
    'response_body = EXCLUDED.response_body, location = EXCLUDED.location, ' +
    'created_at = EXCLUDED.created_at, target_written_at = EXCLUDED.target_written_at, expires_at = EXCLUDED.expires_at',
};

const purgeBatch: Statement = {
  name: 'idempotency.purge',
  text:
    'DELETE FROM idempotency_keys WHERE (api_key_id, key) IN (' +
    'SELECT api_key_id, key FROM idempotency_keys WHERE expires_at <= now() LIMIT $1)',
};

/** False when another transaction holds the key now (a request with it is in flight). */
export async function tryLockKey(tx: Queryable, scope: KeyScope): Promise<boolean> {
  const { rows } = await tx.query<{ locked: boolean }>(tryLock, [scope.apiKeyId, scope.key]);
  return rows[0]?.locked === true;
}

export async function findStoredKey(tx: Queryable, scope: KeyScope): Promise<StoredKey | undefined> {
  const { rows } = await tx.query<KeyRow>(select, [scope.apiKeyId, scope.key]);
  const row = rows[0];
  if (!row) return undefined;
  return {
    fingerprint: row.fingerprint,
    target: row.request_target,
    status: row.response_status,
    body: row.response_body,
    location: row.location,
    expired: row.expired,
  };
}

/** Stores the answer under the key, kept for ttlSeconds from now whatever other instances keep theirs for. */
export async function storeKey(
  tx: Queryable,
  scope: KeyScope,
  request: { fingerprint: string; target: string },
  answer: StoredAnswer,
  ttlSeconds: number,
): Promise<void> {
  await tx.query(upsert, [
    scope.apiKeyId,
    scope.key,
    request.fingerprint,
    answer.status,
    answer.body,
    answer.location,
    ttlSeconds,
    request.target,
  ]);
}

/** Deletes keys past their stored expiry, in batches so no statement holds many rows; returns how many. */
export async function purgeExpiredKeys(db: Queryable, batchSize = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await db.query(purgeBatch, [batchSize]);
    total += rowCount;
    if (rowCount < batchSize) return total;
  }
}
