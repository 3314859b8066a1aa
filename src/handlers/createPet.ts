import { apiPrefix } from '../contract.js';
import { createPet as insertPet } from '../db/pets.js';
import type { Handler, HandlerDeps } from './types.js';

export function createPet({ db }: HandlerDeps): Handler<'createPet'> {
  return async ({ body }) => {
    const pet = await insertPet(db, { name: body.name, categoryId: body.categoryId, status: body.status ?? 'available' });
    return { status: 201, body: pet, headers: { location: `${apiPrefix}/pets/${pet.id}` } };
  };
}
