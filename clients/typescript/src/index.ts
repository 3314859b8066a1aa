export { PetStore, type PetStoreOptions } from './petStore.js';
export type { CallOptions, KeyedCallOptions } from './operationSpec.js';
export type { Answered, CallPromise } from './callPromise.js';
// Every schema of the contract under its name (Pet, NewPet, PetStatus, ...), each operation's query object
// (ListPetsQuery) and the options of each operation with header parameters (CreatePetOptions, GetPetOptions).
export type * from './generated/types.js';
export {
  PetStoreError,
  notModified,
  unexpectedResponse,
  type DeclaredError,
  type ErrorCode,
  type ErrorStatus,
  type OperationId,
} from './errors.js';
export type { DeprecationHandler, DeprecationNotice } from './deprecation.js';
export { apiVersion } from './generated/contract.js';
