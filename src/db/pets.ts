import { asRecords } from './records.js';
import type { Database, Queryable, Statement } from './types.js';

export type PetStatus = 'available' | 'pending' | 'sold';

export interface PetRecord {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}

export interface NewPetRecord {
  name: string;
  categoryId: number;
  status: PetStatus;
}

// Each row is a PetRecord as the driver builds it (int8 already a number,
// category_id under its record name), its NULLs dropped (records.ts): a page
// is returned without a copy. A new field is a column here.
export const petColumns = 'id, name, category_id AS "categoryId", status';

/** The properties of Pet whose schema admits null: their NULL is answered as null, not left out (records.ts). */
export const petNullsKept: ReadonlySet<string> = new Set<keyof PetRecord>();

async function petRecords(db: Queryable, statement: Statement, values: unknown[]): Promise<PetRecord[]> {
  const { rows } = await db.query<PetRecord>(statement, values);
  return asRecords(rows, petNullsKept);
}

const insertPetStatement: Statement = {
  name: 'pets.insert',
  text: `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${petColumns}`,
};

const selectPetById: Statement = {
  name: 'pets.select_by_id',
  text: `SELECT ${petColumns} FROM pets WHERE id = $1`,
};

const listAfter: Statement = {
  name: 'pets.list_after',
  text: `SELECT ${petColumns} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`,
};

// Unnamed, so planned per run for its status: only a plan that knows the
// value can use that status's partial index of ids (migration 0009), which
// reads just the rows of the page whatever the statistics say. A generic
// plan would walk the primary key and filter.
const listByStatusAfter: Statement = {
  text: `SELECT ${petColumns} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
};

// Unnamed, like the status list: the best plan depends on how many ids are asked for.
const listByIds: Statement = {
  text: `SELECT ${petColumns} FROM pets WHERE id = ANY($1::bigint[]) AND ($2::text IS NULL OR status = $2) ORDER BY id`,
};

/** The list statements, for tools that show their plans (npm run bench -- --scale). */
export const listStatements = { listAfter, listByStatusAfter } as const;

export async function insertPet(db: Queryable, pet: NewPetRecord): Promise<PetRecord> {
  const rows = await petRecords(db, insertPetStatement, [pet.name, pet.categoryId, pet.status]);
  const row = rows[0];
  if (!row) throw new Error('INSERT ... RETURNING returned no row');
  return row;
}

export async function findPetById(db: Queryable, id: number): Promise<PetRecord | undefined> {
  return (await petRecords(db, selectPetById, [id]))[0];
}

export interface PetPageQuery {
  /** Only pets with a larger id; 0 for the first page. */
  afterId: number;
  status?: PetStatus | undefined;
  limit: number;
}

/** Pets in ascending id order; keyset pagination so any page costs the same. */
export async function selectPetPage(db: Queryable, query: PetPageQuery): Promise<PetRecord[]> {
  return query.status
    ? petRecords(db, listByStatusAfter, [query.status, query.afterId, query.limit])
    : petRecords(db, listAfter, [query.afterId, query.limit]);
}

/** The pets with these ids (safe integers; those that exist), in ascending id order, optionally of one status. */
export async function selectPetsByIds(
  db: Queryable,
  ids: readonly number[],
  status: PetStatus | undefined,
): Promise<PetRecord[]> {
  return petRecords(db, listByIds, [`{${ids.join(',')}}`, status ?? null]);
}

/**
 * A pet by id for a reader: from a replica when one serves reads. A miss
 * there is asked again on the primary, which has every committed insert: a
 * client reads back the pet it has just created whichever instance (and
 * replica) answers, without the replica having replayed it yet.
 */
export function readPetById(db: Database, id: number): Promise<PetRecord | undefined> {
  return db.read(async () => {
    const replica = db.replica();
    const fromReplica = replica && (await findPetById(replica, id));
    return fromReplica ?? findPetById(db, id);
  });
}

/**
 * A page of pets for a reader: from a replica when one serves reads, so it
 * may lack pets created in the last moments (at most the replica lag bound
 * allowed, else reads go to the primary).
 */
export function readPetPage(db: Database, query: PetPageQuery): Promise<PetRecord[]> {
  return db.read(() => selectPetPage(db.replica() ?? db, query));
}

/**
 * The pets with these ids for a reader: from a replica when one serves
 * reads; when it lacks any of them (not replayed yet, or of another status)
 * the primary answers, so a client finds the pet it has just created.
 */
export async function readPetsByIds(
  db: Database,
  ids: readonly number[],
  status: PetStatus | undefined,
): Promise<PetRecord[]> {
  return db.read(async () => {
    const replica = db.replica();
    const fromReplica = replica && (await selectPetsByIds(replica, ids, status));
    return fromReplica && fromReplica.length === ids.length ? fromReplica : selectPetsByIds(db, ids, status);
  });
}
