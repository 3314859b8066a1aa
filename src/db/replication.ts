import type { Queryable, Statement } from './types.js';

const writableState: Statement = {
  name: 'replication.writable_state',
  text: "SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') = 'on' AS read_only",
};

const primaryPosition: Statement = {
  name: 'replication.primary_position',
  text: 'SELECT pg_current_wal_lsn()::text AS lsn',
};

const replayPosition: Statement = {
  name: 'replication.replay_position',
  text: 'SELECT pg_is_in_recovery() AS in_recovery, pg_last_wal_replay_lsn()::text AS lsn',
};

/** A WAL position ("16/B374D848") as a number of bytes. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(text);
  if (!match?.[1] || !match[2]) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

export class ReadOnlyDatabaseError extends Error {
  override name = 'ReadOnlyDatabaseError';
}

/**
 * Why the database cannot take writes, or undefined when it can: a replica
 * (in recovery), or a server whose new transactions are read-only
 * (default_transaction_read_only, as some failover tools leave an old primary).
 */
export async function readOnlyReason(db: Queryable): Promise<string | undefined> {
  const { rows } = await db.query<{ in_recovery: boolean; read_only: boolean }>(writableState);
  if (rows[0]?.in_recovery) return 'is a replica (pg_is_in_recovery() is true)';
  if (rows[0]?.read_only) return 'only allows read-only transactions (transaction_read_only is on)';
  return undefined;
}

/** The primary's current WAL write position. */
export async function walPosition(primary: Queryable): Promise<bigint> {
  const { rows } = await primary.query<{ lsn: string }>(primaryPosition);
  if (!rows[0]) throw new Error('pg_current_wal_lsn() returned no row');
  return parseLsn(rows[0].lsn);
}

export interface ReplayState {
  inRecovery: boolean;
  /** How far the replica has replayed the primary's WAL; undefined when it is not a replica. */
  replayed: bigint | undefined;
}

export async function replayState(replica: Queryable): Promise<ReplayState> {
  const { rows } = await replica.query<{ in_recovery: boolean; lsn: string | null }>(replayPosition);
  const row = rows[0];
  if (!row) throw new Error('pg_last_wal_replay_lsn() returned no row');
  return { inRecovery: row.in_recovery, replayed: row.in_recovery && row.lsn ? parseLsn(row.lsn) : undefined };
}
