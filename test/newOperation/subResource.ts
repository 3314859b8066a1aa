// What a contributor writes by hand to add a resource under the pet, with its own table: notes, made by
// POST /pets/{petId}/notes (createNote, 201, retried safely with an Idempotency-Key like createPet) and listed
// by GET /pets/{petId}/notes (listNotes). The spec's text, one handler file each and their entries in the
// handler map, one db file, one migration and the links from createPet's 201. test/newOperation/
// newOperation.test.ts applies them to a copy of the repository and runs every tool; nothing else may need
// a hand edit.

import { commonHeaders, errors, readErrors, serverErrors } from './additions.js';

/** The new path, with both operations: placed after its parent path item. */
export const notesPathYaml = `  /pets/{petId}/notes:
    get:
      operationId: listNotes
      summary: List the notes on an animal
      x-slo:
        availability: 99.9
        latency:
          thresholdSeconds: 0.25
          percent: 99
      description: The notes on an animal, oldest first (the first 100).
      tags: [pets]
      security:
        - bearerAuth: ['pets:read']
      parameters:
        - $ref: '#/components/parameters/PetId'
      responses:
        '200':
          description: The animal's notes.
          headers:
${commonHeaders}
          content:
            application/json:
              schema:
                type: array
                maxItems: 100
                items:
                  $ref: '#/components/schemas/Note'
${errors(readErrors)}
${errors(serverErrors)}
    post:
      operationId: createNote
      summary: Add a note to an animal
      x-slo:
        availability: 99.9
        latency:
          thresholdSeconds: 0.5
          percent: 99
      description: |
        Adds a note to an animal. Send an \`Idempotency-Key\` to make retries
        safe, as for adding an animal.
      tags: [pets]
      security:
        - bearerAuth: ['pets:write']
      parameters:
        - $ref: '#/components/parameters/PetId'
        - name: Idempotency-Key
          in: header
          required: false
          description: |
            A unique value the client makes up for one intended note, as for
            adding an animal; no example, so that tools make a new one.
          schema:
            type: string
            minLength: 1
            maxLength: 255
            pattern: '^[!-~]([ -~]*[!-~])?$'
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/NewNote'
      responses:
        '201':
          description: The note, added.
          headers:
            Idempotent-Replayed:
              description: |
                \`true\` when this response is the stored answer to an earlier
                request with the same \`Idempotency-Key\`; absent otherwise.
              required: false
              schema:
                type: string
                enum: ['true']
${commonHeaders}
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Note'
${errors(readErrors)}
        '409':
          $ref: '#/components/responses/IdempotencyKeyInUse'
${errors({ '413': 'PayloadTooLarge', '415': 'UnsupportedMediaType' })}
        '422':
          $ref: '#/components/responses/IdempotencyKeyReused'
${errors(serverErrors)}
`;

/** The note's schemas, added first under components/schemas. */
export const notesSchemaYaml = `    NewNote:
      description: A note to add to an animal.
      type: object
      additionalProperties: false
      required: [text]
      properties:
        text:
          $ref: '#/components/schemas/NoteText'
    Note:
      description: A note on an animal.
      type: object
      additionalProperties: false
      required: [id, petId, text]
      properties:
        id:
          description: Identifier of the note, assigned by the service.
          type: integer
          format: int64
          minimum: 1
          maximum: 9007199254740991
        petId:
          $ref: '#/components/schemas/PetId'
        text:
          $ref: '#/components/schemas/NoteText'
    NoteText:
      description: The note, 1 to 500 characters with no control characters.
      type: string
      minLength: 1
      maxLength: 500
      pattern: '^[^\\x00-\\x1F\\x7F-\\x9F]+$'
`;

/** Links from createPet's 201 to the new operations. */
export const notesLinksYaml = `            createNote:
              operationId: createNote
              description: Adds a note to the new animal.
              parameters:
                petId: $response.body#/id
            listNotes:
              operationId: listNotes
              description: The new animal's notes.
              parameters:
                petId: $response.body#/id
`;

export const notesMigration = `-- The foreign key takes a SHARE ROW EXCLUSIVE lock on pets for milliseconds: reads go on, writes wait.
-- lock_timeout makes the migration give up rather than queue behind a long transaction.
SET LOCAL lock_timeout = '5s';

CREATE TABLE pet_notes (
  id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  pet_id     bigint      NOT NULL REFERENCES pets (id) ON DELETE CASCADE,
  text       text        NOT NULL CHECK (char_length(text) BETWEEN 1 AND 500),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Serves "WHERE pet_id = $1 ORDER BY id LIMIT n".
CREATE INDEX pet_notes_pet_id_id_idx ON pet_notes (pet_id, id);
`;

export const notesDb = `import type { Queryable, Statement } from './types.js';

export interface NoteRecord {
  id: number;
  petId: number;
  text: string;
}

const columns = 'id, pet_id AS "petId", text';

// The pet is found and locked in the insert itself: a pet deleted since the
// request began yields no row (a 404), never a foreign-key error (a 500).
const insertNoteStatement: Statement = {
  name: 'pet_notes.insert',
  text: \`INSERT INTO pet_notes (pet_id, text) SELECT id, $2 FROM pets WHERE id = $1 FOR KEY SHARE RETURNING \${columns}\`,
};

const listNotesStatement: Statement = {
  name: 'pet_notes.list',
  text: \`SELECT \${columns} FROM pet_notes WHERE pet_id = $1 ORDER BY id LIMIT 100\`,
};

/** The new note, or undefined if there is no such pet. */
export async function insertNote(db: Queryable, petId: number, text: string): Promise<NoteRecord | undefined> {
  const { rows } = await db.query<NoteRecord>(insertNoteStatement, [petId, text]);
  return rows[0];
}

/** The first 100 notes on a pet, oldest first. */
export async function listStoredNotes(db: Queryable, petId: number): Promise<NoteRecord[]> {
  const { rows } = await db.query<NoteRecord>(listNotesStatement, [petId]);
  return rows;
}
`;

export const createNoteHandler = `import { insertNote, type NoteRecord } from '../db/notes.js';
import { errorResult } from './errorResult.js';
import { runIdempotently } from './idempotency.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function createNote({ db, idempotencyTtlSeconds, onIdempotentReplay }: HandlerDeps): Handler<'createNote'> {
  const notFound = (petId: number) => errorResult(404, 'not_found', \`Pet \${petId} was not found.\`);
  return async ({ params, body, headers, caller }): Promise<HandlerResult<'createNote'>> => {
    if (!isAssignableId(params.petId)) return notFound(params.petId);
    const key = headers['Idempotency-Key'];
    if (key === undefined) {
      const note = await insertNote(db, params.petId, body.text);
      return note ? { status: 201, body: note } : notFound(params.petId);
    }
    if (!caller) throw new Error('createNote got an Idempotency-Key without an authenticated caller');
    // The pet is looked for after the stored answer: a retry gets its 201 even if the pet is gone since.
    const outcome = await runIdempotently(
      db,
      { apiKeyId: caller.apiKeyId, key },
      { target: { operation: 'createNote', params }, body, ttlSeconds: idempotencyTtlSeconds },
      async (tx) => {
        const note = await insertNote(tx, params.petId, body.text);
        return note ? { status: 201, body: JSON.stringify(note), location: '' } : undefined;
      },
    );
    if (outcome.refused)
      return outcome.refused === 'in_use'
        ? errorResult(409, 'idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed.')
        : errorResult(
            422,
            'idempotency_key_reused',
            'This Idempotency-Key was first used with a different request; send a new key.',
          );
    const { answer, replayed } = outcome;
    if (!answer) return notFound(params.petId);
    if (replayed) onIdempotentReplay('createNote');
    const note = JSON.parse(answer.body) as NoteRecord;
    return { status: 201, body: note, ...(replayed ? { headers: { 'Idempotent-Replayed': 'true' as const } } : {}) };
  };
}
`;

export const listNotesHandler = `import { listStoredNotes } from '../db/notes.js';
import { readPetById } from '../db/pets.js';
import { errorResult } from './errorResult.js';
import { isAssignableId } from './petIds.js';
import type { Handler, HandlerDeps, HandlerResult } from './types.js';

export function listNotes({ db }: HandlerDeps): Handler<'listNotes'> {
  return async ({ params }): Promise<HandlerResult<'listNotes'>> => {
    if (!isAssignableId(params.petId) || !(await readPetById(db, params.petId)))
      return errorResult(404, 'not_found', \`Pet \${params.petId} was not found.\`);
    return { status: 200, body: await listStoredNotes(db, params.petId) };
  };
}
`;
