// What a contributor writes by hand to add two shapes of body under the pet: its care, changed by a JSON
// Merge Patch (PATCH /pets/{petId}/care in application/merge-patch+json: fields sent replace, fields left out
// keep; If-Match to change only what was read, else 412; any other Content-Type 415) and read with its ETag;
// and its photo, bytes in image/png up to 1 MiB (PUT /pets/{petId}/photo: 201 the first time, 204 after;
// GET with its ETag and 304; DELETE). The spec's text, one handler file each and their entries in the handler
// map, one db file each, one migration and its own test file. Its names are its own, so it applies on today's
// spec and beside the other examples. test/newOperation/newOperation.test.ts applies it to a copy of the
// repository and runs every tool; nothing else may need a hand edit.

import { commonHeaders, errors, readErrors, serverErrors } from './additions.js';

const etag = `            ETag:
              $ref: '#/components/headers/ETag'`;

const slo = `      x-slo:
        availability: 99.9
        latency:
          thresholdSeconds: 0.25
          percent: 99`;

const petId = `        - $ref: '#/components/parameters/PetId'`;

const careJson = `          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Care'`;

const png = `            image/png:
              schema:
                type: string
                contentMediaType: image/png`;

/** The new paths, placed after /pets/{petId}. */
export const carePhotoPathsYaml = `  /pets/{petId}/care:
    get:
      operationId: getPetCare
      summary: Get how to care for an animal
${slo}
      description: |
        How to care for an animal; a field not set yet is left out. Its
        \`ETag\` is what \`If-Match\` on \`PATCH /pets/{petId}/care\` compares with.
      tags: [pets]
      security:
        - bearerAuth: ['pets:read']
      parameters:
${petId}
        - $ref: '#/components/parameters/IfNoneMatch'
      responses:
        '200':
          description: The animal's care.
          headers:
${etag}
${commonHeaders}
${careJson}
        '304':
          description: |
            The care has not changed since the \`ETag\` sent in
            \`If-None-Match\`; no body.
          headers:
${etag}
${commonHeaders}
${errors(readErrors)}
${errors(serverErrors)}
    patch:
      operationId: updatePetCare
      summary: Change how to care for an animal
${slo}
      description: |
        A JSON Merge Patch (RFC 7396) of the care: each field sent replaces
        its value, each field left out keeps it. Send the \`ETag\` of a read
        in \`If-Match\` to change only what was read; otherwise the answer
        is 412 and nothing is written.
      tags: [pets]
      security:
        - bearerAuth: ['pets:write']
      parameters:
${petId}
        - name: If-Match
          in: header
          required: false
          description: |
            Entity tags from earlier reads (\`ETag\`), comma-separated, or
            \`*\` (RFC 9110, 13.1.1): the change happens only if one equals
            the current one, else 412.
          schema:
            type: string
            minLength: 1
            maxLength: 2048
            pattern: '^[!-~]([ -~]*[!-~])?$'
            examples: ['"3q2-7wEAAJgBAAAAAAAAAA"']
      requestBody:
        required: true
        content:
          application/merge-patch+json:
            schema:
              $ref: '#/components/schemas/CarePatch'
      responses:
        '200':
          description: The care as changed.
          headers:
${etag}
${commonHeaders}
${careJson}
${errors(readErrors)}
        '412':
          description: |
            \`If-Match\` names no current \`ETag\`: the care changed since it
            was read. Nothing was written; read it again and retry.
          headers:
${commonHeaders}
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/CarePreconditionError'
${errors({ '413': 'PayloadTooLarge', '415': 'UnsupportedMediaType' })}
${errors(serverErrors)}
  /pets/{petId}/photo:
    get:
      operationId: getPetPhoto
      summary: Get an animal's photo
${slo}
      description: The animal's photo, as it was put.
      tags: [pets]
      security:
        - bearerAuth: ['pets:read']
      parameters:
${petId}
        - $ref: '#/components/parameters/IfNoneMatch'
      responses:
        '200':
          description: The photo.
          headers:
${etag}
${commonHeaders}
          content:
${png}
        '304':
          description: |
            The photo has not changed since the \`ETag\` sent in
            \`If-None-Match\`; no body.
          headers:
${etag}
${commonHeaders}
${errors(readErrors)}
${errors(serverErrors)}
    put:
      operationId: putPetPhoto
      summary: Add or replace an animal's photo
${slo}
      description: |
        Stores the photo of an animal, a PNG image of at most 1 MiB: 201 when
        it had none, 204 when it replaces the one it had.
      tags: [pets]
      security:
        - bearerAuth: ['pets:write']
      parameters:
${petId}
      requestBody:
        required: true
        x-body-limit-bytes: 1048576
        content:
${png}
      responses:
        '201':
          description: The photo, stored.
          headers:
            Location:
              description: Path of the photo (\`/v1/pets/{petId}/photo\`).
              required: true
              schema:
                type: string
                maxLength: 64
${commonHeaders}
        '204':
          description: The photo, replaced.
          headers:
${commonHeaders}
${errors(readErrors)}
${errors({ '413': 'PayloadTooLarge', '415': 'UnsupportedMediaType' })}
${errors(serverErrors)}
    delete:
      operationId: deletePetPhoto
      summary: Remove an animal's photo
${slo}
      description: Removes the animal's photo; 404 when it has none.
      tags: [pets]
      security:
        - bearerAuth: ['pets:write']
      parameters:
${petId}
      responses:
        '204':
          description: The photo was removed.
          headers:
${commonHeaders}
${errors(readErrors)}
${errors(serverErrors)}
`;

/** The care's schemas and its 412's Error object, added first under components/schemas. */
export const careSchemaYaml = `    Care:
      description: How to care for an animal; a field not set yet is left out.
      type: object
      additionalProperties: false
      properties:
        diet:
          $ref: '#/components/schemas/CareText'
        vet:
          $ref: '#/components/schemas/CareText'
    CarePatch:
      description: The fields of the care to set (RFC 7396); at least one.
      type: object
      additionalProperties: false
      minProperties: 1
      properties:
        diet:
          $ref: '#/components/schemas/CareText'
        vet:
          $ref: '#/components/schemas/CareText'
    CareText:
      description: 1 to 200 characters with no control characters.
      type: string
      minLength: 1
      maxLength: 200
      pattern: '^[^\\x00-\\x1F\\x7F-\\x9F]+$'
    CarePreconditionError:
      description: |
        The Error object of a change whose \`If-Match\` does not hold: the
        same shape as \`Error\`, with its own code.

        | code | status | when |
        |---|---|---|
        | precondition_failed | 412 | \`If-Match\` names no current \`ETag\` of the care; nothing was written |
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
`;

/** Links from createPet's 201 to the new operations. */
export const carePhotoLinksYaml = `            getPetCare:
              operationId: getPetCare
              description: How to care for the new animal.
              parameters:
                petId: $response.body#/id
            updatePetCare:
              operationId: updatePetCare
              description: Changes how to care for the new animal.
              parameters:
                petId: $response.body#/id
            putPetPhoto:
              operationId: putPetPhoto
              description: Stores the new animal's photo.
              parameters:
                petId: $response.body#/id
`;

export const carePhotoMigration = `-- The foreign keys take a SHARE ROW EXCLUSIVE lock on pets for milliseconds: reads go on, writes wait.
-- lock_timeout makes the migration give up rather than queue behind a long transaction.
SET LOCAL lock_timeout = '5s';

-- One row per pet whose care was ever set; a NULL field is one not set yet.
CREATE TABLE pet_care (
  pet_id bigint PRIMARY KEY REFERENCES pets (id) ON DELETE CASCADE,
  diet   text   CHECK (char_length(diet) BETWEEN 1 AND 200),
  vet    text   CHECK (char_length(vet) BETWEEN 1 AND 200)
);

CREATE TABLE pet_photos (
  pet_id bigint PRIMARY KEY REFERENCES pets (id) ON DELETE CASCADE,
  image  bytea  NOT NULL CHECK (octet_length(image) <= 1048576)
);
`;

export const careDb = `import { asRecords } from './records.js';
import type { Queryable, Statement } from './types.js';

/** How to care for a pet; a field not set yet is left out. */
export interface CareRecord {
  diet?: string;
  vet?: string;
}

// The pet's row is locked against another change of its care (FOR NO KEY UPDATE: new notes or photos go on).
const lockCare: Statement = {
  name: 'pet_care.select_for_update',
  text: 'SELECT c.diet, c.vet FROM pets p LEFT JOIN pet_care c ON c.pet_id = p.id WHERE p.id = $1 FOR NO KEY UPDATE OF p',
};

const selectCare: Statement = {
  name: 'pet_care.select',
  text: 'SELECT c.diet, c.vet FROM pets p LEFT JOIN pet_care c ON c.pet_id = p.id WHERE p.id = $1',
};

const upsertCare: Statement = {
  name: 'pet_care.upsert',
  text: \`INSERT INTO pet_care (pet_id, diet, vet) VALUES ($1, $2, $3)
    ON CONFLICT (pet_id) DO UPDATE SET diet = EXCLUDED.diet, vet = EXCLUDED.vet RETURNING diet, vet\`,
};

const careOf = (rows: CareRecord[]) => asRecords(rows, new Set())[0];

/** The pet's care; undefined when there is no such pet. */
export async function readCare(db: Queryable, petId: number): Promise<CareRecord | undefined> {
  return careOf((await db.query<CareRecord>(selectCare, [petId])).rows);
}

/** The pet's care, locked against another change until the transaction ends; undefined when there is no such pet. */
export async function lockStoredCare(tx: Queryable, petId: number): Promise<CareRecord | undefined> {
  return careOf((await tx.query<CareRecord>(lockCare, [petId])).rows);
}

export async function writeCare(tx: Queryable, petId: number, care: CareRecord): Promise<CareRecord> {
  const written = careOf((await tx.query<CareRecord>(upsertCare, [petId, care.diet ?? null, care.vet ?? null])).rows);
  if (!written) throw new Error(\`the care of pet \${petId} was not written\`);
  return written;
}
`;

export const photosDb = `import type { Queryable, Statement } from './types.js';

// The pet is found and locked in the insert itself: a pet deleted since yields no row (a 404).
// xmax is 0 on a row this statement inserted, and set on one it updated.
const upsertPhoto: Statement = {
  name: 'pet_photos.upsert',
  text: \`INSERT INTO pet_photos (pet_id, image) SELECT id, $2 FROM pets WHERE id = $1 FOR KEY SHARE
    ON CONFLICT (pet_id) DO UPDATE SET image = EXCLUDED.image RETURNING (xmax = 0) AS created\`,
};

const selectPhoto: Statement = { name: 'pet_photos.select', text: 'SELECT image FROM pet_photos WHERE pet_id = $1' };

const deletePhoto: Statement = {
  name: 'pet_photos.delete',
  text: 'DELETE FROM pet_photos WHERE pet_id = $1 RETURNING pet_id',
};

/** 'created' or 'replaced'; undefined when there is no such pet. */
export async function storePhoto(
  db: Queryable,
  petId: number,
  image: Uint8Array,
): Promise<'created' | 'replaced' | undefined> {
  const { rows } = await db.query<{ created: boolean }>(upsertPhoto, [petId, image]);
  const row = rows[0];
  return row === undefined ? undefined : row.created ? 'created' : 'replaced';
}

/** The pet's photo; undefined when it has none (or there is no such pet). */
export async function readPhoto(db: Queryable, petId: number): Promise<Uint8Array | undefined> {
  const { rows } = await db.query<{ image: Uint8Array }>(selectPhoto, [petId]);
  return rows[0]?.image;
}

/** False when the pet had no photo. */
export async function deleteStoredPhoto(db: Queryable, petId: number): Promise<boolean> {
  const { rows } = await db.query(deletePhoto, [petId]);
  return rows.length > 0;
}
`;

export const getPetCareHandler = `import { readCare } from '../db/care.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function getPetCare({ db }: HandlerDeps): Handler<'getPetCare'> {
  return async ({ params }): Promise<HandlerResult<'getPetCare'>> => {
    const care = isAssignableId(params.petId) ? await readCare(db, params.petId) : undefined;
    if (!care) return errorResult(404, 'not_found', \`Pet \${params.petId} was not found.\`);
    return { status: 200, body: care };
  };
}
`;

export const updatePetCareHandler = `import { lockStoredCare, writeCare } from '../db/care.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function updatePetCare({ db }: HandlerDeps): Handler<'updatePetCare'> {
  return async ({ params, body, precondition }): Promise<HandlerResult<'updatePetCare'>> => {
    const { petId } = params;
    const outcome = !isAssignableId(petId)
      ? undefined
      : await db.transaction(async (tx) => {
          const current = await lockStoredCare(tx, petId);
          // Evaluated even for a missing pet, which has no current tag: the answer is then its 404.
          const met = precondition.isMetBy(current);
          if (!current) return undefined;
          if (!met) return 'failed' as const;
          // RFC 7396 on an object of strings: each field sent replaces its value, the others keep theirs.
          return writeCare(tx, petId, { ...current, ...body });
        });
    if (outcome === undefined) return errorResult(404, 'not_found', \`Pet \${petId} was not found.\`);
    if (outcome === 'failed')
      return errorResult(
        412,
        'precondition_failed',
        \`The care of pet \${petId} does not match If-Match; nothing was written.\`,
      );
    return { status: 200, body: outcome };
  };
}
`;

export const putPetPhotoHandler = `import { storePhoto } from '../db/photos.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function putPetPhoto({ db, basePath }: HandlerDeps): Handler<'putPetPhoto'> {
  return async ({ params, body }): Promise<HandlerResult<'putPetPhoto'>> => {
    const stored = isAssignableId(params.petId) ? await storePhoto(db, params.petId, body) : undefined;
    if (!stored) return errorResult(404, 'not_found', \`Pet \${params.petId} was not found.\`);
    return stored === 'created'
      ? { status: 201, headers: { Location: \`\${basePath}/pets/\${params.petId}/photo\` } }
      : { status: 204 };
  };
}
`;

export const getPetPhotoHandler = `import { readPhoto } from '../db/photos.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function getPetPhoto({ db }: HandlerDeps): Handler<'getPetPhoto'> {
  return async ({ params }): Promise<HandlerResult<'getPetPhoto'>> => {
    const photo = isAssignableId(params.petId) ? await readPhoto(db, params.petId) : undefined;
    if (!photo) return errorResult(404, 'not_found', \`Pet \${params.petId} has no photo.\`);
    return { status: 200, body: photo };
  };
}
`;

export const deletePetPhotoHandler = `import { deleteStoredPhoto } from '../db/photos.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function deletePetPhoto({ db }: HandlerDeps): Handler<'deletePetPhoto'> {
  return async ({ params }): Promise<HandlerResult<'deletePetPhoto'>> => {
    if (!isAssignableId(params.petId) || !(await deleteStoredPhoto(db, params.petId)))
      return errorResult(404, 'not_found', \`Pet \${params.petId} has no photo.\`);
    return { status: 204 };
  };
}
`;

/** The example's own test file, black-box through app.inject on both databases, as test/api.test.ts does. */
export const carePhotoTest = `import t from 'tap';
import { forEachBackend, startTestApp } from './helpers/app.js';

const mergePatch = { 'content-type': 'application/merge-patch+json' };
const png = { 'content-type': 'image/png' };

await forEachBackend(t, async (t, backend) => {
  const ctx = await startTestApp(t, backend);
  const call = (method: 'GET' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers = {}, payload?: string | Buffer) =>
    ctx.app.inject({
      method,
      url: \`/v1/pets\${url}\`,
      headers: { ...ctx.auth, ...headers },
      ...(payload === undefined ? {} : { payload }),
    });
  const newPet = async () =>
    (
      await ctx.app.inject({
        method: 'POST',
        url: '/v1/pets',
        headers: ctx.auth,
        payload: { name: 'Rex', categoryId: 1 },
      })
    ).json<{ id: number }>().id;

  await t.test('a merge patch sets the fields it sends and keeps the others', async (t) => {
    const id = await newPet();
    const empty = await call('GET', \`/\${id}/care\`);
    t.equal(empty.statusCode, 200);
    t.same(empty.json(), {}, 'nothing set yet');
    const first = await call('PATCH', \`/\${id}/care\`, mergePatch, JSON.stringify({ diet: 'fish' }));
    t.equal(first.statusCode, 200);
    t.same(first.json(), { diet: 'fish' });
    const second = await call('PATCH', \`/\${id}/care\`, mergePatch, JSON.stringify({ vet: 'Dr. Who' }));
    t.same(second.json(), { diet: 'fish', vet: 'Dr. Who' }, 'diet kept');
    t.equal(
      (await call('GET', \`/\${id}/care\`)).headers['etag'],
      second.headers['etag'],
      "the write's ETag is the read's",
    );
    t.equal(
      (await call('PATCH', \`/\${id}/care\`, { 'content-type': 'application/json' }, '{"diet":"x"}')).statusCode,
      415,
    );
    t.equal((await call('PATCH', \`/\${id}/care\`, mergePatch, '{}')).statusCode, 400, 'an empty patch');
    t.equal((await call('PATCH', '/999999/care', mergePatch, '{"diet":"x"}')).statusCode, 404);
  });

  await t.test('If-Match changes only what was read', async (t) => {
    const id = await newPet();
    const tag = (await call('GET', \`/\${id}/care\`)).headers['etag'] as string;
    const stale = await call('PATCH', \`/\${id}/care\`, { ...mergePatch, 'if-match': '"stale"' }, '{"diet":"hay"}');
    t.equal(stale.statusCode, 412);
    t.same(stale.json(), { code: 'precondition_failed', message: stale.json().message, status: 412 });
    t.same((await call('GET', \`/\${id}/care\`)).json(), {}, 'nothing written');
    t.equal((await call('PATCH', \`/\${id}/care\`, { ...mergePatch, 'if-match': tag }, '{"diet":"hay"}')).statusCode, 200);
    t.equal(
      (await call('PATCH', \`/\${id}/care\`, { ...mergePatch, 'if-match': tag }, '{"diet":"oats"}')).statusCode,
      412,
      'that tag again: a lost update refused',
    );
  });

  await t.test('a photo: 201, then 204, read back byte for byte with its ETag, removed', async (t) => {
    const id = await newPet();
    t.equal((await call('GET', \`/\${id}/photo\`)).statusCode, 404, 'none yet');
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00, 0xfe]);
    const created = await call('PUT', \`/\${id}/photo\`, png, bytes);
    t.equal(created.statusCode, 201);
    t.equal(created.headers['location'], \`/v1/pets/\${id}/photo\`);
    const read = await call('GET', \`/\${id}/photo\`);
    t.equal(read.headers['content-type'], 'image/png');
    t.same(read.rawPayload, bytes, 'the bytes as put');
    t.equal((await call('GET', \`/\${id}/photo\`, { 'if-none-match': String(read.headers['etag']) })).statusCode, 304);
    const other = Buffer.from([1, 2, 3]);
    t.equal((await call('PUT', \`/\${id}/photo\`, png, other)).statusCode, 204, 'replaced');
    t.same((await call('GET', \`/\${id}/photo\`)).rawPayload, other);
    t.equal((await call('PUT', \`/\${id}/photo\`, { 'content-type': 'image/jpeg' }, other)).statusCode, 415);
    t.equal((await call('PUT', \`/\${id}/photo\`, png, Buffer.alloc(1048577))).statusCode, 413, 'over 1 MiB');
    t.equal((await call('PUT', \`/\${id}/photo\`, png, Buffer.alloc(1048576))).statusCode, 204, '1 MiB exactly');
    t.equal((await call('PUT', '/999999/photo', png, other)).statusCode, 404);
    t.equal((await call('DELETE', \`/\${id}/photo\`)).statusCode, 204);
    t.equal((await call('DELETE', \`/\${id}/photo\`)).statusCode, 404, 'gone');
    t.equal((await call('GET', \`/\${id}/photo\`)).statusCode, 404);
  });
});
`;
