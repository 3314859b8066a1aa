import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database, Queryable } from './types.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

// The numbered SQL files at the repository's root: this module sits at
// src/db/ (dist/db/ once compiled), two levels below it in both cases.
export const migrationsDir = fileURLToPath(new URL('../../migrations/', import.meta.url));

const fileName = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** The numbered SQL files of migrations/, in order. */
export function loadMigrations(dir = migrationsDir): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => {
      const match = fileName.exec(file);
      if (!match) throw new Error(`Migration file name ${file} is not NNNN_name.sql`);
      return { version: Number(match[1]), name: match[2] ?? '', sql: readFileSync(join(dir, file), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(
        `Migrations must be numbered 0001, 0002, ... without gaps; found ${migration.version} at position ${index + 1}`,
      );
    }
  });
  return migrations;
}

const createLedger = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer PRIMARY KEY,
  name       text        NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

const currentVersion = {
  name: 'migrations.current',
  text: 'SELECT coalesce(max(version), 0)::int AS version FROM schema_migrations',
};

const ledgerExists = {
  name: 'migrations.ledger_exists',
  text: "SELECT to_regclass('schema_migrations') IS NOT NULL AS exists",
};

const takeLock = { name: 'migrations.lock', text: 'SELECT pg_advisory_xact_lock(72817361)' };

const recordApplied = {
  name: 'migrations.record',
  text: 'INSERT INTO schema_migrations (version, name) VALUES ($1, $2)',
};

async function appliedVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ exists: boolean }>(ledgerExists);
  if (!rows[0]?.exists) return 0;
  const current = await db.query<{ version: number }>(currentVersion);
  return current.rows[0]?.version ?? 0;
}

export interface SchemaStatus {
  applied: number;
  expected: number;
}

export async function schemaStatus(db: Queryable, migrations = loadMigrations()): Promise<SchemaStatus> {
  return { applied: await appliedVersion(db), expected: migrations.length };
}

/**
 * Applies the next pending migration, if any, in its own transaction under
 * the advisory lock: instances that migrate at once take turns, and each
 * reads the ledger after it holds the lock, so none applies a migration
 * twice. Returns the one it applied.
 */
async function applyNext(db: Database, migrations: Migration[]): Promise<Migration | undefined> {
  return db.transaction(async (tx) => {
    await tx.query(takeLock);
    await tx.execScript(createLedger);
    const applied = await appliedVersion(tx);
    const next = migrations.find((migration) => migration.version > applied);
    if (!next) return undefined;
    await tx.execScript(next.sql);
    await tx.query(recordApplied, [next.version, next.name]);
    return next;
  });
}

/**
 * Applies every pending migration, each in its own transaction (all of one
 * migration or none of it), in order. One transaction for them all would
 * hold every lock the earlier ones took until the last one ends: a later
 * migration that waits for a table the service's transactions hold, while
 * those wait for a table an earlier migration locked, is a deadlock
 * (test/database/migrationLocks.test.ts). A failure leaves the ones before
 * it applied and the ledger saying so.
 */
export async function migrate(db: Database, migrations = loadMigrations()): Promise<Migration[]> {
  const applied: Migration[] = [];
  for (;;) {
    const next = await applyNext(db, migrations);
    if (!next) return applied;
    applied.push(next);
  }
}

export class SchemaOutdatedError extends Error {
  override name = 'SchemaOutdatedError';
}

export async function assertSchemaCurrent(db: Queryable): Promise<SchemaStatus> {
  const status = await schemaStatus(db);
  if (status.applied < status.expected) {
    throw new SchemaOutdatedError(
      `The database schema is at version ${status.applied} but this service needs version ${status.expected}. ` +
        'Run `npm run migrate` (with the same DATABASE_URL) first, or set MIGRATE_ON_START=true.',
    );
  }
  return status;
}
