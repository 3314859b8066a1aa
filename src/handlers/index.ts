import { createPet } from './createPet.js';
import { getPet } from './getPet.js';
import { listPets } from './listPets.js';
import type { HandlerDeps, HandlerMap } from './types.js';

/**
 * One handler per operationId of openapi.yaml. `satisfies HandlerMap` makes
 * an operation without a handler (or a handler of the wrong shape) a compile
 * error rather than a 500 at run time.
 */
export function buildHandlers(deps: HandlerDeps) {
  return {
    listPets: listPets(deps),
    createPet: createPet(deps),
    getPet: getPet(deps),
  } satisfies HandlerMap;
}

export type { HandlerDeps, HandlerMap, OperationId } from './types.js';
