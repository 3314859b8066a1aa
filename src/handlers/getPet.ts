import { readPetById } from '../db/pets.js';
import { errorResult } from './errorResult.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

/** The ids the service assigns: 1 to 2^53 - 1 (a JSON number holds them exactly). */
const isAssignableId = (id: number) => Number.isSafeInteger(id) && id >= 1;

export function getPet({ db }: HandlerDeps): Handler<'getPet'> {
  return async ({ params }): Promise<HandlerResult<'getPet'>> => {
    // Any int64 is a valid petId; one the service never assigns names no pet,
    // and the database need not be asked (nor can a rounded double be quoted).
    if (!isAssignableId(params.petId))
      return errorResult(404, 'not_found', 'No pet has this id: ids run from 1 to 9007199254740991.');
    const pet = await readPetById(db, params.petId);
    if (!pet) return errorResult(404, 'not_found', `Pet ${params.petId} was not found.`);
    return { status: 200, body: pet };
  };
}
