// Compile-time checks, run by `npm run typecheck`: each @ts-expect-error
// fails the check if the line below it compiles, that is, if the handler
// types stop carrying the contract's response headers.
import type { HandlerResult } from '../../src/handlers/types.js';

type Created = HandlerResult<'createPet'>;
type Listed = HandlerResult<'listPets'>;
type Fetched = HandlerResult<'getPet'>;

const pet = { id: 1, name: 'Rex', categoryId: 3 };
const location = '/v1/pets/1';
const next = '</v1/pets?cursor=x>; rel="next"';

export const created: Created = { status: 201, body: pet, headers: { Location: location } };

// @ts-expect-error createPet's 201 requires Location
export const withoutLocation: Created = { status: 201, body: pet };

// @ts-expect-error a header the contract does not declare
export const undeclared: Created = { status: 201, body: pet, headers: { Location: location, Extra: '1' } };

// The last page of listPets has no Link: the header is optional.
export const lastPage: Listed = { status: 200, body: [pet] };
export const firstPage: Listed = { status: 200, body: [pet], headers: { Link: next } };

// @ts-expect-error getPet's Link is the deprecation hook's, not the handler's
export const deprecationLink: Fetched = { status: 200, body: pet, headers: { Link: next } };
