// Generated from openapi.yaml by npm run generate (generators/client.ts): never edit.

import type { Answered } from '../callPromise.js';
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

/** What listPets(...).withResponse() resolves with: one member per 2xx status it declares. */
export type ListPetsResult = Answered<
  200,
  operations['listPets']['responses'][200]['content']['application/json'],
  Pick<
    operations['listPets']['responses'][200]['headers'],
    'ETag' | 'Link' | 'X-Request-Id' | 'X-Content-Type-Options' | 'Cache-Control' | 'RateLimit' | 'RateLimit-Policy'
  >
>;

/** The query of listPets. */
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>;

/** The options of listPets, which declares the optional headers (If-None-Match). */
export type ListPetsOptions = CallOptions & {
  /** Sent as If-None-Match. */
  ifNoneMatch?: NonNullable<operations['listPets']['parameters']['header']>['If-None-Match'];
};

/** What createPet(...).withResponse() resolves with: one member per 2xx status it declares. */
export type CreatePetResult = Answered<
  201,
  operations['createPet']['responses'][201]['content']['application/json'],
  Pick<
    operations['createPet']['responses'][201]['headers'],
    | 'Location'
    | 'Idempotent-Replayed'
    | 'X-Request-Id'
    | 'X-Content-Type-Options'
    | 'Cache-Control'
    | 'RateLimit'
    | 'RateLimit-Policy'
  >
>;

/** The options of createPet, which declares Idempotency-Key. */
export type CreatePetOptions = KeyedCallOptions;

/** What getPet(...).withResponse() resolves with: one member per 2xx status it declares. */
export type GetPetResult = Answered<
  200,
  operations['getPet']['responses'][200]['content']['application/json'],
  Pick<
    operations['getPet']['responses'][200]['headers'],
    | 'ETag'
    | 'Deprecation'
    | 'Sunset'
    | 'Link'
    | 'X-Request-Id'
    | 'X-Content-Type-Options'
    | 'Cache-Control'
    | 'RateLimit'
    | 'RateLimit-Policy'
  >
>;

/** The options of getPet, which declares the optional headers (If-None-Match). */
export type GetPetOptions = CallOptions & {
  /** Sent as If-None-Match. */
  ifNoneMatch?: NonNullable<operations['getPet']['parameters']['header']>['If-None-Match'];
};
