// What a contributor writes by hand to add a top-level resource whose id the client chooses: owners, made or
// replaced by PUT /owners/{ownerId} (201 or 200, an ETag; If-None-Match: * to create only, If-Match to
// replace only what was read; 412 otherwise, a code declared in its own Error schema), read by GET
// /owners/{ownerId}; and an owner's adoptions of pets, PUT /owners/{ownerId}/adoptions/{petId} (404 when
// the owner or the pet is missing, 409 when another owner has the pet), their list and the DELETE of one.
// The spec's text, one handler file each and their entries in the handler map, one db file, one migration
// and its own test file. test/newOperation/newOperation.test.ts applies them to a copy of the repository and
// runs every tool; nothing else may need a hand edit.

import { commonHeaders, errors, readErrors, serverErrors } from './additions.js';

const etag = `            ETag:
              $ref: '#/components/headers/ETag'`;

const slo = `      x-slo:
        availability: 99.9
        latency:
          thresholdSeconds: 0.25
          percent: 99`;

const ownerIdParameter = `        - $ref: '#/components/parameters/OwnerId'`;

const json = (schema: string) => `          content:
            application/json:
              schema:
                $ref: '#/components/schemas/${schema}'`;

/** The new paths, appended after the last path item. */
export const ownersPathsYaml = `  /owners/{ownerId}:
    get:
      operationId: getOwner
      summary: Get an owner
${slo}
      description: |
        Returns one owner by the id it was given. Its \`ETag\` is what
        \`If-Match\` on \`PUT /owners/{ownerId}\` compares with.
      tags: [owners]
      security:
        - bearerAuth: ['pets:read']
      parameters:
${ownerIdParameter}
        - $ref: '#/components/parameters/IfNoneMatch'
      responses:
        '200':
          description: The owner.
          headers:
${etag}
${commonHeaders}
${json('Owner')}
        '304':
          description: |
            The owner has not changed since the \`ETag\` sent in
            \`If-None-Match\`; no body.
          headers:
${etag}
${commonHeaders}
${errors(readErrors)}
${errors(serverErrors)}
    put:
      operationId: putOwner
      summary: Add or replace an owner
${slo}
      description: |
        Adds the owner under the id the client chose (201), or replaces the
        owner with that id (200). Send \`If-None-Match: *\` to add only, or
        the \`ETag\` of a read in \`If-Match\` to replace only what was read;
        otherwise the answer is 412 and nothing is written.
      tags: [owners]
      security:
        - bearerAuth: ['pets:write']
      parameters:
${ownerIdParameter}
        - $ref: '#/components/parameters/IfMatch'
        - name: If-None-Match
          in: header
          required: false
          description: |
            \`*\`: add the owner only if no owner has this id (RFC 9110,
            13.1.2), else 412. Entity tags work as on a read.
          schema:
            type: string
            minLength: 1
            maxLength: 2048
            pattern: '^[!-~]([ -~]*[!-~])?$'
            examples: ['*']
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/NewOwner'
      responses:
        '200':
          description: The owner, replaced.
          headers:
${etag}
${commonHeaders}
${json('Owner')}
        '201':
          description: The owner, added.
          headers:
            Location:
              description: Path of the new owner (\`/v1/owners/{ownerId}\`).
              required: true
              schema:
                type: string
                maxLength: 64
${etag}
${commonHeaders}
          links:
            getOwner:
              operationId: getOwner
              description: The new owner.
              parameters:
                ownerId: $response.body#/id
            listAdoptions:
              operationId: listAdoptions
              description: The new owner's adoptions.
              parameters:
                ownerId: $response.body#/id
            putOwner:
              operationId: putOwner
              description: Replaces the new owner (with its \`ETag\` in \`If-Match\`).
              parameters:
                ownerId: $response.body#/id
${json('Owner')}
${errors({ '400': 'BadRequest', '401': 'Unauthorized', '403': 'Forbidden' })}
${errors({ '412': 'PreconditionFailed', '413': 'PayloadTooLarge', '415': 'UnsupportedMediaType' })}
${errors(serverErrors)}
  /owners/{ownerId}/adoptions:
    get:
      operationId: listAdoptions
      summary: List an owner's adoptions
${slo}
      description: The pets an owner has adopted, by pet id (the first 100).
      tags: [owners]
      security:
        - bearerAuth: ['pets:read']
      parameters:
${ownerIdParameter}
        - $ref: '#/components/parameters/IfNoneMatch'
      responses:
        '200':
          description: The owner's adoptions.
          headers:
${etag}
${commonHeaders}
${json('Adoptions')}
        '304':
          $ref: '#/components/responses/NotModified'
${errors(readErrors)}
${errors(serverErrors)}
  /owners/{ownerId}/adoptions/{petId}:
    put:
      operationId: putAdoption
      summary: Have an owner adopt a pet
${slo}
      description: |
        Records that the owner adopted the pet (201), or confirms it (200).
        404 when the owner or the pet does not exist; 409 when another owner
        has adopted the pet.
      tags: [owners]
      security:
        - bearerAuth: ['pets:write']
      parameters:
${ownerIdParameter}
        - $ref: '#/components/parameters/PetId'
      responses:
        '200':
          description: The owner had already adopted the pet.
          headers:
${commonHeaders}
${json('Adoption')}
        '201':
          description: The adoption, recorded.
          headers:
${commonHeaders}
          links:
            putAdoption:
              operationId: putAdoption
              description: The same adoption again (200).
              parameters:
                ownerId: $response.body#/ownerId
                petId: $response.body#/petId
            deleteAdoption:
              operationId: deleteAdoption
              description: Undoes the adoption.
              parameters:
                ownerId: $response.body#/ownerId
                petId: $response.body#/petId
${json('Adoption')}
${errors(readErrors)}
        '409':
          $ref: '#/components/responses/PetAdopted'
${errors(serverErrors)}
    delete:
      operationId: deleteAdoption
      summary: Undo an adoption
${slo}
      description: Removes the owner's adoption of the pet.
      tags: [owners]
      security:
        - bearerAuth: ['pets:write']
      parameters:
${ownerIdParameter}
        - $ref: '#/components/parameters/PetId'
      responses:
        '204':
          description: The adoption was removed.
          headers:
${commonHeaders}
${errors(readErrors)}
${errors(serverErrors)}
`;

/** The owner's id, and If-Match: added first under components/parameters. */
export const ownersParametersYaml = `    OwnerId:
      name: ownerId
      in: path
      required: true
      description: |
        Identifier of the owner, chosen by the client: a lower-case letter,
        then 2 to 30 lower-case letters, digits or dashes.
      schema:
        $ref: '#/components/schemas/OwnerId'
      examples:
        found:
          value: ada-lovelace
    IfMatch:
      name: If-Match
      in: header
      required: false
      description: |
        Entity tags from earlier reads (\`ETag\`), comma-separated, or \`*\`
        (RFC 9110, 13.1.1): the write happens only if one equals the current
        one (strong comparison), else 412 and nothing is written.
      schema:
        type: string
        minLength: 1
        maxLength: 2048
        pattern: '^[!-~]([ -~]*[!-~])?$'
        examples: ['"3q2-7wEAAJgBAAAAAAAAAA"']
`;

/** The schemas, added first under components/schemas: the owner, the adoption, and two Error objects. */
export const ownersSchemaYaml = `    OwnerId:
      description: Identifier of an owner, chosen by the client.
      type: string
      minLength: 3
      maxLength: 31
      pattern: '^[a-z][a-z0-9-]{2,30}$'
    NewOwner:
      description: An owner, as sent to add or replace one.
      type: object
      additionalProperties: false
      required: [name]
      properties:
        name:
          $ref: '#/components/schemas/OwnerName'
    Owner:
      description: An owner of pets.
      type: object
      additionalProperties: false
      required: [id, name]
      properties:
        id:
          $ref: '#/components/schemas/OwnerId'
        name:
          $ref: '#/components/schemas/OwnerName'
    OwnerName:
      description: The owner's name, 1 to 100 characters with no control characters.
      type: string
      minLength: 1
      maxLength: 100
      pattern: '^[^\\x00-\\x1F\\x7F-\\x9F]+$'
    Adoption:
      description: A pet adopted by an owner.
      type: object
      additionalProperties: false
      required: [ownerId, petId]
      properties:
        ownerId:
          $ref: '#/components/schemas/OwnerId'
        petId:
          $ref: '#/components/schemas/PetId'
    Adoptions:
      description: An owner's adoptions, by pet id.
      type: array
      maxItems: 100
      items:
        $ref: '#/components/schemas/Adoption'
    PreconditionError:
      description: |
        The Error object of a write whose \`If-Match\` or \`If-None-Match\`
        does not hold: the same shape as \`Error\`, with its own code.

        | code | status | when |
        |---|---|---|
        | precondition_failed | 412 | \`If-Match\` names no current \`ETag\` (the target changed since it was read, or is missing), or \`If-None-Match: *\` and the target exists; nothing was written |
      type: object
      additionalProperties: false
      required: [code, message, status]
      properties:
        code:
          type: string
          enum: [precondition_failed]
        message:
          type: string
          maxLength: 1000
        status:
          type: integer
          format: int32
          minimum: 412
          maximum: 412
          enum: [412]
    AdoptionError:
      description: |
        The Error object of an adoption the pet's state refuses: the same
        shape as \`Error\`, with its own code.

        | code | status | when |
        |---|---|---|
        | pet_adopted | 409 | another owner has adopted the pet; that owner must undo the adoption first |
      type: object
      additionalProperties: false
      required: [code, message, status]
      properties:
        code:
          type: string
          enum: [pet_adopted]
        message:
          type: string
          maxLength: 1000
        status:
          type: integer
          format: int32
          minimum: 409
          maximum: 409
          enum: [409]
`;

const errorHeaders = `      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
        X-Content-Type-Options:
          $ref: '#/components/headers/ContentTypeOptions'
        Cache-Control:
          $ref: '#/components/headers/CacheControl'
        RateLimit:
          $ref: '#/components/headers/RateLimit'
        RateLimit-Policy:
          $ref: '#/components/headers/RateLimitPolicy'`;

/** The two error responses, added first under components/responses. */
export const ownersResponsesYaml = `    PreconditionFailed:
      description: |
        \`If-Match\` or \`If-None-Match\` does not hold for the target as it is
        now; nothing was written. Read it again (its \`ETag\`) and retry.
${errorHeaders}
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/PreconditionError'
          example:
            code: precondition_failed
            message: Owner ada-lovelace exists; If-None-Match asked to add it only.
            status: 412
    PetAdopted:
      description: Another owner has adopted the pet.
${errorHeaders}
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/AdoptionError'
          example:
            code: pet_adopted
            message: Pet 1 is adopted by another owner.
            status: 409
`;

/** The owners tag, after the pets tag. */
export const ownersTagYaml = `  - name: owners
    description: The people who adopt animals, under ids they choose.
`;

export const ownersMigration = `-- The foreign key takes a SHARE ROW EXCLUSIVE lock on pets for milliseconds: reads go on, writes wait.
-- lock_timeout makes the migration give up rather than queue behind a long transaction.
SET LOCAL lock_timeout = '5s';

CREATE TABLE owners (
  id         text        PRIMARY KEY CHECK (id ~ '^[a-z][a-z0-9-]{2,30}$'),
  name       text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A pet has at most one owner: its id is the key.
CREATE TABLE adoptions (
  pet_id     bigint      PRIMARY KEY REFERENCES pets (id) ON DELETE CASCADE,
  owner_id   text        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Serves "WHERE owner_id = $1 ORDER BY pet_id LIMIT n".
CREATE INDEX adoptions_owner_id_pet_id_idx ON adoptions (owner_id, pet_id);
`;

export const ownersDb = `import type { Queryable, Statement } from './types.js';

export interface OwnerRecord {
  id: string;
  name: string;
}

export interface AdoptionRecord {
  ownerId: string;
  petId: number;
}

const adoptionColumns = 'owner_id AS "ownerId", pet_id AS "petId"';

const selectOwner: Statement = { name: 'owners.select', text: 'SELECT id, name FROM owners WHERE id = $1' };

const lockOwner: Statement = {
  name: 'owners.select_for_update',
  text: 'SELECT id, name FROM owners WHERE id = $1 FOR UPDATE',
};

// DO NOTHING: an owner another transaction added meanwhile yields no row, and the caller looks again.
const insertOwner: Statement = {
  name: 'owners.insert',
  text: 'INSERT INTO owners (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id, name',
};

const updateOwner: Statement = {
  name: 'owners.update',
  text: 'UPDATE owners SET name = $2 WHERE id = $1 RETURNING id, name',
};

// The owner and the pet are found and locked in the insert itself: either missing yields no row.
const insertAdoptionStatement: Statement = {
  name: 'adoptions.insert',
  text: \`INSERT INTO adoptions (owner_id, pet_id)
    SELECT owners.id, pets.id FROM owners, pets WHERE owners.id = $1 AND pets.id = $2 FOR KEY SHARE
    ON CONFLICT (pet_id) DO NOTHING RETURNING \${adoptionColumns}\`,
};

const selectAdoption: Statement = {
  name: 'adoptions.select_for_share',
  text: \`SELECT \${adoptionColumns} FROM adoptions WHERE pet_id = $1 FOR SHARE\`,
};

const parentsExist: Statement = {
  name: 'adoptions.parents',
  text: 'SELECT EXISTS (SELECT 1 FROM owners WHERE id = $1) AS owner, EXISTS (SELECT 1 FROM pets WHERE id = $2) AS pet',
};

const listAdoptionsStatement: Statement = {
  name: 'adoptions.list',
  text: \`SELECT \${adoptionColumns} FROM adoptions WHERE owner_id = $1 ORDER BY pet_id LIMIT 100\`,
};

const deleteAdoptionStatement: Statement = {
  name: 'adoptions.delete',
  text: 'DELETE FROM adoptions WHERE owner_id = $1 AND pet_id = $2 RETURNING pet_id',
};

export async function findOwner(db: Queryable, id: string): Promise<OwnerRecord | undefined> {
  const { rows } = await db.query<OwnerRecord>(selectOwner, [id]);
  return rows[0];
}

/** The owner, locked until the transaction ends; undefined if there is none (then nothing is locked). */
export async function lockStoredOwner(tx: Queryable, id: string): Promise<OwnerRecord | undefined> {
  const { rows } = await tx.query<OwnerRecord>(lockOwner, [id]);
  return rows[0];
}

/** The new owner, or undefined if one with this id was added meanwhile. */
export async function insertStoredOwner(tx: Queryable, owner: OwnerRecord): Promise<OwnerRecord | undefined> {
  const { rows } = await tx.query<OwnerRecord>(insertOwner, [owner.id, owner.name]);
  return rows[0];
}

export async function updateStoredOwner(tx: Queryable, owner: OwnerRecord): Promise<OwnerRecord | undefined> {
  const { rows } = await tx.query<OwnerRecord>(updateOwner, [owner.id, owner.name]);
  return rows[0];
}

/** The new adoption, or undefined if the owner or the pet is missing or the pet is adopted already. */
export async function insertAdoption(tx: Queryable, adoption: AdoptionRecord): Promise<AdoptionRecord | undefined> {
  const { rows } = await tx.query<AdoptionRecord>(insertAdoptionStatement, [adoption.ownerId, adoption.petId]);
  return rows[0];
}

/** Who adopted the pet, locked until the transaction ends. */
export async function findAdoption(tx: Queryable, petId: number): Promise<AdoptionRecord | undefined> {
  const { rows } = await tx.query<AdoptionRecord>(selectAdoption, [petId]);
  return rows[0];
}

export async function adoptionParentsExist(
  db: Queryable,
  ownerId: string,
  petId: number,
): Promise<{ owner: boolean; pet: boolean }> {
  const { rows } = await db.query<{ owner: boolean; pet: boolean }>(parentsExist, [ownerId, petId]);
  return rows[0] ?? { owner: false, pet: false };
}

/** The first 100 adoptions of an owner, by pet id. */
export async function listStoredAdoptions(db: Queryable, ownerId: string): Promise<AdoptionRecord[]> {
  const { rows } = await db.query<AdoptionRecord>(listAdoptionsStatement, [ownerId]);
  return rows;
}

/** False when the owner had not adopted the pet. */
export async function deleteStoredAdoption(db: Queryable, ownerId: string, petId: number): Promise<boolean> {
  const { rows } = await db.query(deleteAdoptionStatement, [ownerId, petId]);
  return rows.length > 0;
}
`;

export const getOwnerHandler = `import { findOwner } from '../db/owners.js';
import { errorResult } from './errorResult.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function getOwner({ db }: HandlerDeps): Handler<'getOwner'> {
  return async ({ params }): Promise<HandlerResult<'getOwner'>> => {
    const owner = await findOwner(db, params.ownerId);
    if (!owner) return errorResult(404, 'not_found', \`Owner \${params.ownerId} was not found.\`);
    return { status: 200, body: owner };
  };
}
`;

export const putOwnerHandler = `import { insertStoredOwner, lockStoredOwner, updateStoredOwner, type OwnerRecord } from '../db/owners.js';
import { errorResult } from './errorResult.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function putOwner({ db, basePath }: HandlerDeps): Handler<'putOwner'> {
  return async ({ params, body, precondition }): Promise<HandlerResult<'putOwner'>> => {
    const wanted: OwnerRecord = { id: params.ownerId, name: body.name };
    const outcome = await db.transaction(async (tx) => {
      // Twice at most: an owner added by another request between the look and the insert is looked at again, locked.
      for (let attempt = 0; attempt < 2; attempt++) {
        const current = await lockStoredOwner(tx, wanted.id);
        if (!precondition.isMetBy(current)) return 'failed' as const;
        if (current) return { created: false, owner: await updateStoredOwner(tx, wanted) };
        const added = await insertStoredOwner(tx, wanted);
        if (added) return { created: true, owner: added };
      }
      throw new Error(\`owner \${wanted.id} was neither found nor added\`);
    });
    if (outcome === 'failed')
      return errorResult(
        412,
        'precondition_failed',
        \`Owner \${wanted.id} does not match If-Match or If-None-Match; nothing was written.\`,
      );
    if (!outcome.owner) throw new Error(\`owner \${wanted.id} was locked but not updated\`);
    return outcome.created
      ? { status: 201, body: outcome.owner, headers: { Location: \`\${basePath}/owners/\${wanted.id}\` } }
      : { status: 200, body: outcome.owner };
  };
}
`;

export const putAdoptionHandler = `import { adoptionParentsExist, findAdoption, insertAdoption } from '../db/owners.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function putAdoption({ db }: HandlerDeps): Handler<'putAdoption'> {
  return async ({ params }): Promise<HandlerResult<'putAdoption'>> => {
    const { ownerId, petId } = params;
    if (!isAssignableId(petId)) return errorResult(404, 'not_found', \`Pet \${petId} was not found.\`);
    const outcome = await db.transaction(async (tx) => {
      const added = await insertAdoption(tx, { ownerId, petId });
      if (added) return { status: 201 as const, adoption: added };
      const existing = await findAdoption(tx, petId);
      if (existing)
        return { status: existing.ownerId === ownerId ? (200 as const) : (409 as const), adoption: existing };
      return { status: 404 as const, parents: await adoptionParentsExist(tx, ownerId, petId) };
    });
    if (outcome.status === 409) return errorResult(409, 'pet_adopted', \`Pet \${petId} is adopted by another owner.\`);
    if (outcome.status === 404)
      return errorResult(
        404,
        'not_found',
        outcome.parents.owner ? \`Pet \${petId} was not found.\` : \`Owner \${ownerId} was not found.\`,
      );
    return { status: outcome.status, body: outcome.adoption };
  };
}
`;

export const listAdoptionsHandler = `import { findOwner, listStoredAdoptions } from '../db/owners.js';
import { errorResult } from './errorResult.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function listAdoptions({ db }: HandlerDeps): Handler<'listAdoptions'> {
  return async ({ params }): Promise<HandlerResult<'listAdoptions'>> => {
    if (!(await findOwner(db, params.ownerId)))
      return errorResult(404, 'not_found', \`Owner \${params.ownerId} was not found.\`);
    return { status: 200, body: await listStoredAdoptions(db, params.ownerId) };
  };
}
`;

export const deleteAdoptionHandler = `import { deleteStoredAdoption } from '../db/owners.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function deleteAdoption({ db }: HandlerDeps): Handler<'deleteAdoption'> {
  return async ({ params }): Promise<HandlerResult<'deleteAdoption'>> => {
    const { ownerId, petId } = params;
    if (!isAssignableId(petId) || !(await deleteStoredAdoption(db, ownerId, petId)))
      return errorResult(404, 'not_found', \`Owner \${ownerId} has not adopted pet \${petId}.\`);
    return { status: 204 };
  };
}
`;

/** The example's own test file, black-box through app.inject on both databases, as test/api.test.ts does. */
export const ownersTest = `import t from 'tap';
import { forEachBackend, startTestApp, type TestApp } from './helpers/app.js';

async function call(
  ctx: TestApp,
  method: 'GET' | 'PUT' | 'DELETE',
  url: string,
  headers: Record<string, string> = {},
  payload?: object,
) {
  return ctx.app.inject({
    method,
    url: \`/v1\${url}\`,
    headers: { ...ctx.auth, ...headers },
    ...(payload === undefined ? {} : { payload }),
  });
}

await forEachBackend(t, async (t, backend) => {
  const ctx = await startTestApp(t, backend);
  const put = (id: string, name: string, headers: Record<string, string> = {}) =>
    call(ctx, 'PUT', \`/owners/\${id}\`, headers, { name });

  await t.test('putOwner creates at the id the client chose, then replaces', async (t) => {
    const created = await put('ada', 'Ada');
    t.equal(created.statusCode, 201);
    t.same(created.json(), { id: 'ada', name: 'Ada' });
    t.equal(created.headers['location'], '/v1/owners/ada');
    const read = await call(ctx, 'GET', '/owners/ada');
    t.equal(read.statusCode, 200);
    t.equal(created.headers['etag'], read.headers['etag'], "the write's ETag is the read's");
    const replaced = await put('ada', 'Ada L.');
    t.equal(replaced.statusCode, 200);
    t.same(replaced.json(), { id: 'ada', name: 'Ada L.' });
    t.not(replaced.headers['etag'], read.headers['etag'], 'a new tag for a new body');
    t.equal(
      (await call(ctx, 'GET', '/owners/ada', { 'if-none-match': String(replaced.headers['etag']) })).statusCode,
      304,
    );
  });

  await t.test('If-None-Match: * adds only; If-Match replaces only what was read', async (t) => {
    t.equal((await put('bob', 'Bob', { 'if-none-match': '*' })).statusCode, 201);
    const again = await put('bob', 'Other', { 'if-none-match': '*' });
    t.equal(again.statusCode, 412);
    t.same(again.json(), { code: 'precondition_failed', message: again.json().message, status: 412 });
    const tag = (await call(ctx, 'GET', '/owners/bob')).headers['etag'] as string;
    t.equal((await put('bob', 'Robert', { 'if-match': '"stale"' })).statusCode, 412, 'a stale tag');
    t.equal((await call(ctx, 'GET', '/owners/bob')).json().name, 'Bob', 'nothing written');
    t.equal((await put('bob', 'Robert', { 'if-match': tag })).statusCode, 200, 'the current tag');
    t.equal((await put('bob', 'Rob', { 'if-match': tag })).statusCode, 412, 'that tag again: a lost update refused');
    t.equal((await put('nobody', 'No', { 'if-match': '*' })).statusCode, 412, 'If-Match on a missing owner');
    t.equal((await call(ctx, 'GET', '/owners/nobody')).statusCode, 404);
  });

  await t.test('an id outside the pattern is a 400', async (t) => {
    t.equal((await put('Ada', 'Ada')).statusCode, 400);
  });

  await t.test('adoptions: 404 for a missing parent, 409 for a pet adopted by another owner', async (t) => {
    const pet = (
      await ctx.app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: ctx.auth,
        payload: { name: 'Rex', categoryId: 1 },
      })
    ).json() as { id: number };
    await put('carol', 'Carol');
    await put('dave', 'Dave');
    const missingOwner = await call(ctx, 'PUT', \`/owners/nobody/adoptions/\${pet.id}\`);
    t.equal(missingOwner.statusCode, 404);
    t.match(missingOwner.json().message, /Owner nobody/);
    t.equal((await call(ctx, 'PUT', '/owners/carol/adoptions/999999')).statusCode, 404, 'missing pet');
    const adopted = await call(ctx, 'PUT', \`/owners/carol/adoptions/\${pet.id}\`);
    t.equal(adopted.statusCode, 201);
    t.same(adopted.json(), { ownerId: 'carol', petId: pet.id });
    t.equal((await call(ctx, 'PUT', \`/owners/carol/adoptions/\${pet.id}\`)).statusCode, 200, 'again: 200');
    const taken = await call(ctx, 'PUT', \`/owners/dave/adoptions/\${pet.id}\`);
    t.equal(taken.statusCode, 409);
    t.equal(taken.json().code, 'pet_adopted');
    const list = await call(ctx, 'GET', '/owners/carol/adoptions');
    t.same(list.json(), [{ ownerId: 'carol', petId: pet.id }]);
    t.same((await call(ctx, 'GET', '/owners/dave/adoptions')).json(), []);
    t.equal((await call(ctx, 'GET', '/owners/nobody/adoptions')).statusCode, 404);
    t.equal((await call(ctx, 'DELETE', \`/owners/dave/adoptions/\${pet.id}\`)).statusCode, 404, "not dave's");
    t.equal((await call(ctx, 'DELETE', \`/owners/carol/adoptions/\${pet.id}\`)).statusCode, 204);
    t.same((await call(ctx, 'GET', '/owners/carol/adoptions')).json(), []);
    t.equal((await call(ctx, 'PUT', \`/owners/dave/adoptions/\${pet.id}\`)).statusCode, 201, 'free again');
  });
});
`;
