import { readPetById } from '../db/pets.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function getPet({ db }: HandlerDeps): Handler<'getPet'> {
  return async ({ params }): Promise<HandlerResult<'getPet'>> => {
    if (!isAssignableId(params.petId))
      return errorResult(404, 'not_found', 'No pet has this id: ids run from 1 to 9007199254740991.');
    const pet = await readPetById(db, params.petId);
    if (!pet) return errorResult(404, 'not_found', `Pet ${params.petId} was not found.`);
    return { status: 200, body: pet };
  };
}
