/**
 * Whether a pet id (PetId in openapi.yaml: any int64) can name a pet: the
 * service assigns 1 to 2^53 - 1, which a JSON number holds exactly. Any other
 * id names no pet, so the database need not be asked (nor can a rounded
 * double be quoted). Every operation that takes a petId checks it here.
 */
export const isAssignableId = (id: number): boolean => Number.isSafeInteger(id) && id >= 1;
