// Generated from openapi.yaml by npm run generate (generators/client.ts): never edit.

import type { OperationRequest, OperationSpec } from '../operationSpec.js';
import type { operations } from './api.js';
import type { ListPetsOptions, CreatePetOptions, GetPetOptions, ListPetsQuery } from './types.js';

/** Each operation of the contract as the transport sends it. */
export const operationTable = {
  listPets: {
    method: 'GET',
    path: '/pets',
    query: ['limit', 'status', 'cursor', 'id'],
    idempotencyKey: false,
    optionalHeaders: { ifNoneMatch: 'If-None-Match' },
    notModified: true,
    success: { 200: true },
  },
  createPet: {
    method: 'POST',
    path: '/pets',
    query: [],
    body: 'application/json',
    idempotencyKey: true,
    success: { 201: true },
  },
  getPet: {
    method: 'GET',
    path: '/pets/{petId}',
    query: [],
    idempotencyKey: false,
    optionalHeaders: { ifNoneMatch: 'If-None-Match' },
    notModified: true,
    success: { 200: true },
  },
} as const satisfies Record<keyof operations, OperationSpec>;

/**
 * One method per operationId of the contract: path parameters in path order, then the body, then the
 * query, then the call options. The transport (PetStore) sends each call.
 */
export abstract class PetStoreOperations {
  /** Sends one call of an operation; resolves with its answer's body (undefined without one). */
  protected abstract sendOperation(operation: keyof operations, request: OperationRequest): Promise<unknown>;

  /** Walks an operation's pages: each answer's body, following Link rel="next". */
  protected abstract walkOperation(
    operation: keyof operations,
    request: OperationRequest,
  ): AsyncGenerator<unknown, void, undefined>;

  /**
   * List all animals: `GET /pets`.
   * Retried after a lost connection or a retryable answer (GET is idempotent).
   * With `ifNoneMatch` holding its current ETag, rejects with PetStoreError 304 `not_modified`.
   * @throws {PetStoreError<'listPets'>} for an error answer (`PetStoreError.is(error, 'listPets')` narrows it)
   */
  listPets(
    query: ListPetsQuery = {},
    options: ListPetsOptions = {},
  ): Promise<operations['listPets']['responses'][200]['content']['application/json']> {
    return this.sendOperation('listPets', { query, options }) as Promise<
      operations['listPets']['responses'][200]['content']['application/json']
    >;
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
   * Retried after a lost connection or a retryable answer, with the same Idempotency-Key on every attempt (`options.idempotencyKey`, else a new random UUID per call): the service applies it once.
   * @throws {PetStoreError<'createPet'>} for an error answer (`PetStoreError.is(error, 'createPet')` narrows it)
   */
  createPet(
    body: NonNullable<operations['createPet']['requestBody']>['content']['application/json'],
    options: CreatePetOptions = {},
  ): Promise<operations['createPet']['responses'][201]['content']['application/json']> {
    return this.sendOperation('createPet', { body, options }) as Promise<
      operations['createPet']['responses'][201]['content']['application/json']
    >;
  }

  /**
   * Get an animal (deprecated): `GET /pets/{petId}`.
   * Retried after a lost connection or a retryable answer (GET is idempotent).
   * With `ifNoneMatch` holding its current ETag, rejects with PetStoreError 304 `not_modified`.
   * @deprecated The service removes it at its sunset (Thu, 05 Dec 2030 00:00:00 GMT); after it, calls fail with PetStoreError 410 `gone` whose `successor` names the replacement. Use `listPets` (`/v1/pets?id={petId}`) instead.
   * @throws {PetStoreError<'getPet'>} for an error answer (`PetStoreError.is(error, 'getPet')` narrows it)
   */
  getPet(
    petId: operations['getPet']['parameters']['path']['petId'],
    options: GetPetOptions = {},
  ): Promise<operations['getPet']['responses'][200]['content']['application/json']> {
    return this.sendOperation('getPet', { path: { petId }, options }) as Promise<
      operations['getPet']['responses'][200]['content']['application/json']
    >;
  }
}
