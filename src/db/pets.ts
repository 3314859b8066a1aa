import { int8ToNumber } from './int8.js';
import type { Queryable, Statement } from './types.js';

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

interface PetRow {
  id: string;
  name: string;
  category_id: string;
  status: PetStatus;
}

const columns = 'id, name, category_id, status';

const insertPet: Statement = {
  name: 'pets.insert',
  text: `INSERT INTO pets (name, category_id, status) VALUES ($1, $2, $3) RETURNING ${columns}`,
};

const selectPet: Statement = {
  name: 'pets.select_by_id',
  text: `SELECT ${columns} FROM pets WHERE id = $1`,
};

const listAfter: Statement = {
  name: 'pets.list_after',
  text: `SELECT ${columns} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`,
};

// Unnamed: a generic plan would assume every status is a third of the rows
// and walk the primary key, reading thousands of rows per page for a rare
// status; planned per run, it takes the (status, id) index for those.
const listByStatusAfter: Statement = {
  text: `SELECT ${columns} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
};

function toPet(row: PetRow): PetRecord {
  return { id: int8ToNumber(row.id), name: row.name, categoryId: int8ToNumber(row.category_id), status: row.status };
}

/** The list statements, for tools that show their plans (npm run bench -- --scale). */
export const listStatements = { listAfter, listByStatusAfter } as const;

export async function createPet(db: Queryable, pet: NewPetRecord): Promise<PetRecord> {
  const { rows } = await db.query<PetRow>(insertPet, [pet.name, pet.categoryId, pet.status]);
  const row = rows[0];
  if (!row) throw new Error('INSERT ... RETURNING returned no row');
  return toPet(row);
}

export async function findPet(db: Queryable, id: number): Promise<PetRecord | undefined> {
  const { rows } = await db.query<PetRow>(selectPet, [id]);
  return rows[0] && toPet(rows[0]);
}

export interface PetPageQuery {
  /** Only pets with a larger id; 0 for the first page. */
  afterId: number;
  status?: PetStatus | undefined;
  limit: number;
}

/** Pets in ascending id order; keyset pagination so any page costs the same. */
export async function listPets(db: Queryable, query: PetPageQuery): Promise<PetRecord[]> {
  const { rows } = query.status
    ? await db.query<PetRow>(listByStatusAfter, [query.status, query.afterId, query.limit])
    : await db.query<PetRow>(listAfter, [query.afterId, query.limit]);
  return rows.map(toPet);
}
