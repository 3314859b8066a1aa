// What a contributor writes by hand to add two operations, DELETE /pets/{petId} (deletePet, 204) and
// PATCH /pets/{petId} (updatePet, 200 with the pet): the spec's text, one handler file each, their entries in
// the handler map and one db function each. test/newOperation/newOperation.test.ts applies them to a copy of
// the repository and runs every tool; nothing else may need a hand edit.

export const commonHeaders = `            X-Request-Id:
              $ref: '#/components/headers/RequestId'
            X-Content-Type-Options:
              $ref: '#/components/headers/ContentTypeOptions'
            Cache-Control:
              $ref: '#/components/headers/CacheControl'
            RateLimit:
              $ref: '#/components/headers/RateLimit'
            RateLimit-Policy:
              $ref: '#/components/headers/RateLimitPolicy'`;

export const errors = (statuses: Record<string, string>) =>
  Object.entries(statuses)
    .map(([status, name]) => `        '${status}':\n          $ref: '#/components/responses/${name}'`)
    .join('\n');

export const readErrors = { '400': 'BadRequest', '401': 'Unauthorized', '403': 'Forbidden', '404': 'NotFound' };
export const serverErrors = { '429': 'TooManyRequests', '500': 'InternalError', '503': 'ServiceUnavailable' };

/** The two operations, appended to the path item /pets/{petId} (the last path of openapi.yaml). */
export const operationsYaml = `    delete:
      operationId: deletePet
      summary: Remove an animal
      x-slo:
        availability: 99.9
        latency:
          thresholdSeconds: 0.25
          percent: 99
      description: Removes an animal from the store; its id is never given again.
      tags: [pets]
      security:
        - bearerAuth: ['pets:write']
      parameters:
        - $ref: '#/components/parameters/PetId'
      responses:
        '204':
          description: The animal was removed.
          headers:
${commonHeaders}
${errors(readErrors)}
${errors(serverErrors)}
    patch:
      operationId: updatePet
      summary: Change an animal
      x-slo:
        availability: 99.9
        latency:
          thresholdSeconds: 0.25
          percent: 99
      description: Changes the name or status of an animal; fields left out keep their value.
      tags: [pets]
      security:
        - bearerAuth: ['pets:write']
      parameters:
        - $ref: '#/components/parameters/PetId'
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/PetChange'
      responses:
        '200':
          description: The animal as changed.
          headers:
${commonHeaders}
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Pet'
${errors(readErrors)}
${errors({ '413': 'PayloadTooLarge', '415': 'UnsupportedMediaType' })}
${errors(serverErrors)}
`;

/** The request body of updatePet, added first under components/schemas. */
export const schemaYaml = `    PetChange:
      description: The fields of an animal to change; at least one.
      type: object
      additionalProperties: false
      minProperties: 1
      properties:
        name:
          $ref: '#/components/schemas/PetName'
        status:
          $ref: '#/components/schemas/PetStatus'
`;

/** Links from createPet's 201 to the new operations, added to its links. */
export const linksYaml = `            deletePet:
              operationId: deletePet
              description: Removes the new animal.
              parameters:
                petId: $response.body#/id
            updatePet:
              operationId: updatePet
              description: Changes the new animal.
              parameters:
                petId: $response.body#/id
`;

export const deletePetHandler = `import { deleteStoredPet } from '../db/pets.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function deletePet({ db }: HandlerDeps): Handler<'deletePet'> {
  return async ({ params }): Promise<HandlerResult<'deletePet'>> => {
    if (!isAssignableId(params.petId) || !(await deleteStoredPet(db, params.petId)))
      return errorResult(404, 'not_found', \`Pet \${params.petId} was not found.\`);
    return { status: 204 };
  };
}
`;

export const updatePetHandler = `import { updateStoredPet } from '../db/pets.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function updatePet({ db }: HandlerDeps): Handler<'updatePet'> {
  return async ({ params, body }): Promise<HandlerResult<'updatePet'>> => {
    const pet = isAssignableId(params.petId) ? await updateStoredPet(db, params.petId, body) : undefined;
    if (!pet) return errorResult(404, 'not_found', \`Pet \${params.petId} was not found.\`);
    return { status: 200, body: pet };
  };
}
`;

/** Appended to src/db/pets.ts. */
export const dbFunctions = `
const deletePetStatement: Statement = { name: 'pets.delete', text: 'DELETE FROM pets WHERE id = $1 RETURNING id' };

/** Deletes a pet; false when none has this id. */
export async function deleteStoredPet(db: Queryable, id: number): Promise<boolean> {
  const { rows } = await db.query<{ id: number }>(deletePetStatement, [id]);
  return rows.length > 0;
}

const updatePetStatement: Statement = {
  name: 'pets.update',
  text: \`UPDATE pets SET name = COALESCE($2, name), status = COALESCE($3, status) WHERE id = $1 RETURNING \${petColumns}\`,
};

/** Changes a pet's name or status (undefined: kept); undefined when no pet has this id. */
export async function updateStoredPet(
  db: Queryable,
  id: number,
  change: { name?: string; status?: PetStatus },
): Promise<PetRecord | undefined> {
  return (await petRecords(db, updatePetStatement, [id, change.name ?? null, change.status ?? null]))[0];
}
`;
