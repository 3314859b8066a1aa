// Compile-time checks, run by `npm run typecheck`: a handler answers only
// the statuses its operation declares in openapi.yaml, errors included.
// Each @ts-expect-error fails the check if the line below it compiles.
import { errorResult } from '../../src/handlers/errorResult.js';
import type { Handler, HandlerResult } from '../../src/handlers/types.js';

const pet = { id: 1, name: 'Rex', categoryId: 3 };

// getPet declares 404; createPet does not.
export const missing: HandlerResult<'getPet'> = errorResult(404, 'not_found', 'Pet 1 was not found.');
// @ts-expect-error createPet declares no 404
export const createNotFound: HandlerResult<'createPet'> = errorResult(404, 'not_found', 'Pet 1 was not found.');

// A handler's return type is checked the same way, in every branch.
export const getOrMissing: Handler<'getPet'> = async ({ params }) =>
  params.petId === 1 ? { status: 200, body: pet } : errorResult(404, 'not_found', 'Pet 2 was not found.');
// @ts-expect-error listPets declares no 404
export const listNotFound: Handler<'listPets'> = async () => errorResult(404, 'not_found', 'none');

// createPet's 409 and 422 carry the IdempotencyError codes, and only those.
export const inUse: HandlerResult<'createPet'> = errorResult(409, 'idempotency_key_in_use', 'in flight');
// @ts-expect-error 409's schema (IdempotencyError) has no code not_found
export const inUseWrongCode: HandlerResult<'createPet'> = errorResult(409, 'not_found', 'in flight');
// @ts-expect-error getPet's 404 is the Error object, which has no idempotency codes
export const notFoundWrongCode: HandlerResult<'getPet'> = errorResult(404, 'idempotency_key_reused', 'x');

// A status no operation declares at all, success or error.
// @ts-expect-error getPet declares no 418
export const teapot: HandlerResult<'getPet'> = errorResult(418, 'invalid_request', 'short and stout');
// @ts-expect-error createPet answers 201, not 200
export const createdAs200: HandlerResult<'createPet'> = { status: 200, body: pet };

// A response without content (getPet's 304) is a status alone; one with content needs its body.
export const notModified: HandlerResult<'getPet'> = { status: 304 };
// @ts-expect-error a 304 has no body
export const notModifiedWithBody: HandlerResult<'getPet'> = { status: 304, body: pet };
// @ts-expect-error getPet's 200 carries the pet
export const foundWithoutBody: HandlerResult<'getPet'> = { status: 200 };
