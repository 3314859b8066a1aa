import { findPet } from '../db/pets.js';
import { notFound } from '../errors.js';
import type { Handler, HandlerDeps } from './types.js';

export function getPet({ db }: HandlerDeps): Handler<'getPet'> {
  return async ({ params }) => {
    const pet = await findPet(db, params.petId);
    if (!pet) throw notFound(`Pet ${params.petId} was not found.`);
    return { status: 200, body: pet };
  };
}
