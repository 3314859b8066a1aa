// Generated from openapi.yaml by npm run generate (generators/client.ts): never edit.

import type { Answered, CallPromise } from '../callPromise.js';
import type { OperationRequest, OperationSpec } from '../operationSpec.js';
import type { operations } from './api.js';
import type {
  ListPetsOptions,
  CreatePetOptions,
  GetPetOptions,
  ListPetsQuery,
  ListPetsResult,
  CreatePetResult,
  GetPetResult,
} from './types.js';

/** Each operation of the contract as the transport sends it. */
export const operationTable = {
  listPets: {
    method: 'GET',
    path: '/pets',
    query: ['limit', 'status', 'cursor', 'id'],
    accept: 'application/json',
    idempotencyKey: false,
    optionalHeaders: { ifNoneMatch: 'If-None-Match' },
    notModified: true,
    success: {
      200: {
        content: ['application/json'],
        headers: {
          ETag: { type: 'string' },
          Link: { type: 'string' },
          'X-Request-Id': { type: 'string' },
          'X-Content-Type-Options': { type: 'string' },
          'Cache-Control': { type: 'string' },
          RateLimit: { type: 'string' },
          'RateLimit-Policy': { type: 'string' },
        },
      },
    },
  },
  createPet: {
    method: 'POST',
    path: '/pets',
    query: [],
    accept: 'application/json',
    body: ['application/json'],
    idempotencyKey: true,
    success: {
      201: {
        content: ['application/json'],
        headers: {
          Location: { type: 'string', required: true },
          'Idempotent-Replayed': { type: 'string' },
          'X-Request-Id': { type: 'string' },
          'X-Content-Type-Options': { type: 'string' },
          'Cache-Control': { type: 'string' },
          RateLimit: { type: 'string' },
          'RateLimit-Policy': { type: 'string' },
        },
      },
    },
  },
  getPet: {
    method: 'GET',
    path: '/pets/{petId}',
    query: [],
    accept: 'application/json',
    idempotencyKey: false,
    optionalHeaders: { ifNoneMatch: 'If-None-Match' },
    notModified: true,
    success: {
      200: {
        content: ['application/json'],
        headers: {
          ETag: { type: 'string' },
          Deprecation: { type: 'string' },
          Sunset: { type: 'string' },
          Link: { type: 'string' },
          'X-Request-Id': { type: 'string' },
          'X-Content-Type-Options': { type: 'string' },
          'Cache-Control': { type: 'string' },
          RateLimit: { type: 'string' },
          'RateLimit-Policy': { type: 'string' },
        },
      },
    },
  },
} as const satisfies Record<keyof operations, OperationSpec>;

/**
 * One method per operationId of the contract: path parameters in path order, then the body, then the
 * query, then the call options. The transport (PetStore) sends each call.
 */
export abstract class PetStoreOperations {
  /** Sends one call of an operation; resolves with its answer's body (undefined without one), withResponse() with all of it. */
  protected abstract sendOperation(operation: keyof operations, request: OperationRequest): CallPromise<Answered>;

  /** Walks an operation's pages: each answer's body, following Link rel="next". */
  protected abstract walkOperation(
    operation: keyof operations,
    request: OperationRequest,
  ): AsyncGenerator<unknown, void, undefined>;

  /**
   * List all animals: `GET /pets`.
   * Resolves with the answer's body; `.withResponse()` with its status, declared headers and body too (ListPetsResult).
   * Retried after a lost connection or a retryable answer (GET is idempotent).
   * With `ifNoneMatch` holding its current ETag, rejects with PetStoreError 304 `not_modified`.
   * @throws {PetStoreError<'listPets'>} for an error answer (`PetStoreError.is(error, 'listPets')` narrows it)
   */
  listPets(query: ListPetsQuery = {}, options: ListPetsOptions = {}): CallPromise<ListPetsResult> {
    return this.sendOperation('listPets', { query, options }) as CallPromise<ListPetsResult>;
  }

  /**
   * Every page of listPets, one after the other: follows each answer's `Link: <…>; rel="next"` (to baseUrl's origin only) and stops on the page without one. Each page is one call, with its own deadline and retries.
   * @throws {PetStoreError<'listPets'>} for an error answer
   */
  listPetsPages(
    query: ListPetsQuery = {},
    options: ListPetsOptions = {},
  ): AsyncGenerator<operations['listPets']['responses'][200]['content']['application/json'], void, undefined> {
    return this.walkOperation('listPets', { query, options }) as AsyncGenerator<
      operations['listPets']['responses'][200]['content']['application/json'],
      void,
      undefined
    >;
  }

  /**
   * Add an animal: `POST /pets`.
   * Resolves with the answer's body; `.withResponse()` with its status, declared headers and body too (CreatePetResult).
   * Retried after a lost connection or a retryable answer, with the same Idempotency-Key on every attempt (`options.idempotencyKey`, else a new random UUID per call): the service applies it once.
   * @throws {PetStoreError<'createPet'>} for an error answer (`PetStoreError.is(error, 'createPet')` narrows it)
   */
  createPet(
    body: NonNullable<operations['createPet']['requestBody']>['content']['application/json'],
    options: CreatePetOptions = {},
  ): CallPromise<CreatePetResult> {
    return this.sendOperation('createPet', { body, options }) as CallPromise<CreatePetResult>;
  }

  /**
   * Get an animal (deprecated): `GET /pets/{petId}`.
   * Resolves with the answer's body; `.withResponse()` with its status, declared headers and body too (GetPetResult).
   * Retried after a lost connection or a retryable answer (GET is idempotent).
   * With `ifNoneMatch` holding its current ETag, rejects with PetStoreError 304 `not_modified`.
   * @deprecated The service removes it at its sunset (Thu, 05 Dec 2030 00:00:00 GMT); after it, calls fail with PetStoreError 410 `gone` whose `successor` names the replacement. Use `listPets` (`/v1/pets?id={petId}`) instead.
   * @throws {PetStoreError<'getPet'>} for an error answer (`PetStoreError.is(error, 'getPet')` narrows it)
   */
  getPet(
    petId: operations['getPet']['parameters']['path']['petId'],
    options: GetPetOptions = {},
  ): CallPromise<GetPetResult> {
    return this.sendOperation('getPet', { path: { petId }, options }) as CallPromise<GetPetResult>;
  }
}
