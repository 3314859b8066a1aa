// Generated from openapi.yaml by npm run generate (generators/client.ts): never edit.

import type { CallOptions, KeyedCallOptions } from '../operationSpec.js';
import type { components, operations } from './api.js';

export type PetId = components['schemas']['PetId'];
export type CategoryId = components['schemas']['CategoryId'];
export type PetName = components['schemas']['PetName'];
export type PetStatus = components['schemas']['PetStatus'];
export type NewPet = components['schemas']['NewPet'];
export type Pet = components['schemas']['Pet'];
export type Pets = components['schemas']['Pets'];
export type Error = components['schemas']['Error'];
export type IdempotencyError = components['schemas']['IdempotencyError'];
export type ScopeError = components['schemas']['ScopeError'];
export type SunsetError = components['schemas']['SunsetError'];

/** The query of listPets. */
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>;

/** The options of listPets, which declares the optional headers (If-None-Match). */
export type ListPetsOptions = CallOptions & {
  /** Sent as If-None-Match. */
  ifNoneMatch?: NonNullable<operations['listPets']['parameters']['header']>['If-None-Match'];
};

/** The options of createPet, which declares Idempotency-Key. */
export type CreatePetOptions = KeyedCallOptions;

/** The options of getPet, which declares the optional headers (If-None-Match). */
export type GetPetOptions = CallOptions & {
  /** Sent as If-None-Match. */
  ifNoneMatch?: NonNullable<operations['getPet']['parameters']['header']>['If-None-Match'];
};
