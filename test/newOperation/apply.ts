import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../lib/repoRoot.js';
import type { RepoCopy } from '../helpers/repoCopy.js';
import { dbFunctions, deletePetHandler, linksYaml, operationsYaml, schemaYaml, updatePetHandler } from './additions.js';
import {
  deleteAdoptionHandler,
  getOwnerHandler,
  listAdoptionsHandler,
  ownersDb,
  ownersMigration,
  ownersParametersYaml,
  ownersPathsYaml,
  ownersResponsesYaml,
  ownersSchemaYaml,
  ownersTagYaml,
  ownersTest,
  putAdoptionHandler,
  putOwnerHandler,
} from './owners.js';
import {
  createNoteHandler,
  listNotesHandler,
  notesDb,
  notesLinksYaml,
  notesMigration,
  notesPathYaml,
  notesSchemaYaml,
} from './subResource.js';
import {
  careDb,
  carePhotoLinksYaml,
  carePhotoMigration,
  carePhotoPathsYaml,
  carePhotoTest,
  careSchemaYaml,
  deletePetPhotoHandler,
  getPetCareHandler,
  getPetPhotoHandler,
  photosDb,
  putPetPhotoHandler,
  updatePetCareHandler,
} from './careAndPhoto.js';

// How the worked examples are applied to a copy of the repository, as a contributor would write them.

// The next numbered migrations after those of this tree.
const migrationFile = (after: number, name: string) => {
  const last = readdirSync(join(repoRoot, 'migrations'))
    .map((file) => Number(/^(\d+)_/.exec(file)?.[1] ?? 0))
    .reduce((a, b) => Math.max(a, b), 0);
  return `migrations/${String(last + after).padStart(4, '0')}_${name}.sql`;
};
const notesMigrationFile = migrationFile(1, 'create_pet_notes');
const ownersMigrationFile = migrationFile(2, 'create_owners');
/** The care and photo example's migration: the next after the notes', and the owners' when they are applied. */
const carePhotoMigrationFile = (withOwners: boolean) => migrationFile(withOwners ? 3 : 2, 'create_pet_care_and_photos');

/** What the third example, owners (./owners.ts), writes by hand. */
export const ownersEdited = [
  'openapi.yaml',
  'src/handlers/getOwner.ts',
  'src/handlers/putOwner.ts',
  'src/handlers/putAdoption.ts',
  'src/handlers/listAdoptions.ts',
  'src/handlers/deleteAdoption.ts',
  'src/handlers/index.ts',
  'src/db/owners.ts',
  ownersMigrationFile,
  'test/owners.test.ts',
];

/** What the fourth example, the care's merge patch and the photo (./careAndPhoto.ts), writes by hand. */
export const carePhotoEdited = (withOwners: boolean) => [
  'openapi.yaml',
  'src/handlers/index.ts',
  'src/handlers/getPetCare.ts',
  'src/handlers/updatePetCare.ts',
  'src/handlers/getPetPhoto.ts',
  'src/handlers/putPetPhoto.ts',
  'src/handlers/deletePetPhoto.ts',
  'src/db/care.ts',
  'src/db/photos.ts',
  carePhotoMigrationFile(withOwners),
  'test/carePhoto.test.ts',
];

export const handEdited = [
  'openapi.yaml',
  'src/handlers/deletePet.ts',
  'src/handlers/updatePet.ts',
  'src/handlers/createNote.ts',
  'src/handlers/listNotes.ts',
  'src/handlers/index.ts',
  'src/db/pets.ts',
  'src/db/notes.ts',
  notesMigrationFile,
];

function edit(copy: RepoCopy, path: string, change: (text: string) => string): void {
  const file = join(copy.root, path);
  const before = readFileSync(file, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`${path}: the edit changed nothing`);
  writeFileSync(file, after);
}

/** Where a path item of openapi.yaml ends: before the next path, or the next top-level key. */
export function endOfPathItem(text: string, path: string): number {
  const start = text.indexOf(`\n  ${path}:\n`);
  if (start < 0) throw new Error(`openapi.yaml has no path ${path}`);
  const next = /\n(?! {3}| *\n)/g;
  next.lastIndex = start + path.length + 5;
  const found = next.exec(text);
  return found === null ? text.length : found.index + 1;
}

/** Inserts text at the end of a path item: new operations on it, or a new path right after it. */
const afterPathItem = (text: string, path: string, added: string) => {
  const end = endOfPathItem(text, path);
  return `${text.slice(0, end)}${added}${text.slice(end)}`;
};

/** Adds links to an operation's success response, found by its operationId. */
function addLinks(text: string, operationId: string, added: string): string {
  const operation = text.indexOf(`operationId: ${operationId}\n`);
  const links = text.indexOf('          links:\n', operation);
  if (operation < 0 || links < 0) throw new Error(`${operationId} has no links in openapi.yaml`);
  const at = links + '          links:\n'.length;
  return `${text.slice(0, at)}${added}${text.slice(at)}`;
}

/** The new resource first, its path right after its parent's, so that the parent's item is no longer last. */
export function addSubResource(copy: RepoCopy): void {
  edit(copy, 'openapi.yaml', (text) =>
    addLinks(
      afterPathItem(text, '/pets/{petId}', notesPathYaml).replace(
        /^ {2}schemas:\n/m,
        () => `  schemas:\n${notesSchemaYaml}`,
      ),
      'createPet',
      notesLinksYaml,
    ),
  );
  writeFileSync(join(copy.root, 'src/handlers/createNote.ts'), createNoteHandler);
  writeFileSync(join(copy.root, 'src/handlers/listNotes.ts'), listNotesHandler);
  writeFileSync(join(copy.root, 'src/db/notes.ts'), notesDb);
  writeFileSync(join(copy.root, notesMigrationFile), notesMigration);
  edit(copy, 'src/handlers/index.ts', (text) =>
    text
      .replace(
        "import { createPet } from './createPet.js';",
        "import { createNote } from './createNote.js';\nimport { createPet } from './createPet.js';",
      )
      .replace(
        "import { listPets } from './listPets.js';",
        "import { listNotes } from './listNotes.js';\nimport { listPets } from './listPets.js';",
      )
      .replace(
        '    getPet: getPet(deps),\n',
        '    getPet: getPet(deps),\n    createNote: createNote(deps),\n    listNotes: listNotes(deps),\n',
      ),
  );
}

export function addOperations(copy: RepoCopy): void {
  edit(copy, 'openapi.yaml', (text) =>
    addLinks(
      afterPathItem(text, '/pets/{petId}', operationsYaml).replace(
        /^ {2}schemas:\n/m,
        () => `  schemas:\n${schemaYaml}`,
      ),
      'createPet',
      linksYaml,
    ),
  );
  writeFileSync(join(copy.root, 'src/handlers/deletePet.ts'), deletePetHandler);
  writeFileSync(join(copy.root, 'src/handlers/updatePet.ts'), updatePetHandler);
  edit(copy, 'src/handlers/index.ts', (text) =>
    text
      .replace(
        "import { createPet } from './createPet.js';",
        "import { createPet } from './createPet.js';\nimport { deletePet } from './deletePet.js';",
      )
      .replace(
        "import { listPets } from './listPets.js';",
        "import { listPets } from './listPets.js';\nimport { updatePet } from './updatePet.js';",
      )
      .replace(
        '    getPet: getPet(deps),\n',
        '    getPet: getPet(deps),\n    deletePet: deletePet(deps),\n    updatePet: updatePet(deps),\n',
      ),
  );
  edit(copy, 'src/db/pets.ts', (text) => `${text}${dbFunctions}`);
}

/** Owners, a resource made by PUT at the client's id, and their adoptions of pets: paths at the end of paths. */
export function addOwners(copy: RepoCopy): void {
  edit(copy, 'openapi.yaml', (text) =>
    text
      .replace(/^paths:\n/m, () => `${ownersTagYaml}paths:\n`)
      .replace(/^components:\n/m, () => `${ownersPathsYaml}components:\n`)
      .replace(/^ {2}parameters:\n/m, () => `  parameters:\n${ownersParametersYaml}`)
      .replace(/^ {2}schemas:\n/m, () => `  schemas:\n${ownersSchemaYaml}`)
      .replace(/^ {2}responses:\n/m, () => `  responses:\n${ownersResponsesYaml}`),
  );
  const files: Record<string, string> = {
    'src/handlers/getOwner.ts': getOwnerHandler,
    'src/handlers/putOwner.ts': putOwnerHandler,
    'src/handlers/putAdoption.ts': putAdoptionHandler,
    'src/handlers/listAdoptions.ts': listAdoptionsHandler,
    'src/handlers/deleteAdoption.ts': deleteAdoptionHandler,
    'src/db/owners.ts': ownersDb,
    [ownersMigrationFile]: ownersMigration,
    'test/owners.test.ts': ownersTest,
  };
  for (const [path, text] of Object.entries(files)) writeFileSync(join(copy.root, path), text);
  edit(copy, 'src/handlers/index.ts', (text) =>
    text
      .replace(
        "import { createPet } from './createPet.js';",
        "import { createPet } from './createPet.js';\nimport { deleteAdoption } from './deleteAdoption.js';",
      )
      .replace(
        "import { getPet } from './getPet.js';",
        "import { getOwner } from './getOwner.js';\nimport { getPet } from './getPet.js';",
      )
      .replace(/^import \{ list/m, (first) => `import { listAdoptions } from './listAdoptions.js';\n${first}`)
      .replace(
        "import { listPets } from './listPets.js';",
        "import { listPets } from './listPets.js';\n" +
          "import { putAdoption } from './putAdoption.js';\nimport { putOwner } from './putOwner.js';",
      )
      .replace(
        '    getPet: getPet(deps),\n',
        '    getPet: getPet(deps),\n    putOwner: putOwner(deps),\n    getOwner: getOwner(deps),\n' +
          '    putAdoption: putAdoption(deps),\n    listAdoptions: listAdoptions(deps),\n' +
          '    deleteAdoption: deleteAdoption(deps),\n',
      ),
  );
}

/** The care (a JSON Merge Patch) and the photo (bytes) under the pet: paths right after its item. */
export function addCareAndPhoto(copy: RepoCopy, withOwners: boolean): void {
  edit(copy, 'openapi.yaml', (text) =>
    addLinks(
      afterPathItem(text, '/pets/{petId}', carePhotoPathsYaml).replace(
        /^ {2}schemas:\n/m,
        () => `  schemas:\n${careSchemaYaml}`,
      ),
      'createPet',
      carePhotoLinksYaml,
    ),
  );
  const files: Record<string, string> = {
    'src/handlers/getPetCare.ts': getPetCareHandler,
    'src/handlers/updatePetCare.ts': updatePetCareHandler,
    'src/handlers/getPetPhoto.ts': getPetPhotoHandler,
    'src/handlers/putPetPhoto.ts': putPetPhotoHandler,
    'src/handlers/deletePetPhoto.ts': deletePetPhotoHandler,
    'src/db/care.ts': careDb,
    'src/db/photos.ts': photosDb,
    [carePhotoMigrationFile(withOwners)]: carePhotoMigration,
    'test/carePhoto.test.ts': carePhotoTest,
  };
  for (const [path, text] of Object.entries(files)) writeFileSync(join(copy.root, path), text);
  edit(copy, 'src/handlers/index.ts', (text) =>
    text
      .replace(
        "import type { HandlerDeps, HandlerMap } from './types.js';",
        (types) =>
          "import { deletePetPhoto } from './deletePetPhoto.js';\nimport { getPetCare } from './getPetCare.js';\n" +
          "import { getPetPhoto } from './getPetPhoto.js';\nimport { putPetPhoto } from './putPetPhoto.js';\n" +
          `import { updatePetCare } from './updatePetCare.js';\n${types}`,
      )
      .replace(
        '    getPet: getPet(deps),\n',
        '    getPet: getPet(deps),\n    getPetCare: getPetCare(deps),\n    updatePetCare: updatePetCare(deps),\n' +
          '    getPetPhoto: getPetPhoto(deps),\n    putPetPhoto: putPetPhoto(deps),\n' +
          '    deletePetPhoto: deletePetPhoto(deps),\n',
      ),
  );
}
