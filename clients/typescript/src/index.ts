export { PetStore } from './petStore.js';
export type {
  CallOptions,
  CreatePetOptions,
  ListPetsQuery,
  NewPet,
  Pet,
  PetStatus,
  PetStoreOptions,
} from './petStore.js';
export { PetStoreError, type DeclaredError, type ErrorCode, type ErrorStatus, type OperationId } from './errors.js';
export type { DeprecationHandler, DeprecationNotice } from './deprecation.js';
export { apiVersion } from './generated/contract.js';
