import { insertPet, type PetRecord } from '../db/pets.js';
import { errorResult } from './errorResult.js';
import { runIdempotently, type KeyRefusal } from './idempotency.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

const refusal = {
  in_use: () =>
    errorResult(
      409,
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still being processed; retry after it has been answered.',
    ),
  reused: () =>
    errorResult(
      422,
      'idempotency_key_reused',
      'This Idempotency-Key was first used with a different request body; send a new key for a different request.',
    ),
} satisfies Record<KeyRefusal, () => HandlerResult<'createPet'>>;

export function createPet({
  db,
  basePath,
  idempotencyTtlSeconds,
  onIdempotentReplay,
}: HandlerDeps): Handler<'createPet'> {
  const locationOf = (pet: PetRecord) => `${basePath}/pets/${pet.id}`;
  return async ({ body, headers, caller }): Promise<HandlerResult<'createPet'>> => {
    const newPet = { name: body.name, categoryId: body.categoryId, status: body.status ?? 'available' } as const;
    const key = headers['Idempotency-Key'];
    if (key === undefined) {
      const pet = await insertPet(db, newPet);
      return { status: 201, body: pet, headers: { Location: locationOf(pet) } };
    }
    if (!caller) throw new Error('createPet got an Idempotency-Key without an authenticated caller');
    const outcome = await runIdempotently(
      db,
      { apiKeyId: caller.apiKeyId, key },
      { target: { operation: 'createPet', params: {} }, body, ttlSeconds: idempotencyTtlSeconds },
      async (tx) => {
        const pet = await insertPet(tx, newPet);
        return { status: 201, body: JSON.stringify(pet), location: locationOf(pet) };
      },
    );
    if (outcome.refused) return refusal[outcome.refused]();
    const { answer, replayed } = outcome;
    if (replayed) onIdempotentReplay('createPet');
    // Only 201 answers are ever stored; the body is the pet this service wrote.
    const pet = JSON.parse(answer.body) as PetRecord;
    return {
      status: 201,
      body: pet,
      headers: { Location: answer.location, ...(replayed ? { 'Idempotent-Replayed': 'true' as const } : {}) },
    };
  };
}
