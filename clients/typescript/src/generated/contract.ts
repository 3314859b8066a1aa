// Generated from openapi.yaml by npm run generate (generators/client.ts): never edit.

/** info.version of openapi.yaml: the contract this client was generated from, and its own version. */
export const apiVersion = "1.3.0";

/** The largest page listPets serves (its limit parameter's maximum). */
export const maxPageSize = 100;

/** The error statuses each operation declares. */
export const declaredErrorStatuses = {"listPets":[400,401,403,429,500,503],"createPet":[400,401,403,409,413,415,422,429,500,503],"getPet":[400,401,403,404,410,429,500,503]} as const;
