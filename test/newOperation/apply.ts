import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../lib/repoRoot.js';
import type { RepoCopy } from '../helpers/repoCopy.js';
import { dbFunctions, deletePetHandler, linksYaml, operationsYaml, schemaYaml, updatePetHandler } from './additions.js';
import {
  createNoteHandler,
  listNotesHandler,
  notesDb,
  notesLinksYaml,
  notesMigration,
  notesPathYaml,
  notesSchemaYaml,
} from './subResource.js';

// How the worked examples are applied to a copy of the repository, as a contributor would write them.

// The next numbered migration after those of this tree.
const notesMigrationFile = (() => {
  const last = readdirSync(join(repoRoot, 'migrations'))
    .map((file) => Number(/^(\d+)_/.exec(file)?.[1] ?? 0))
    .reduce((a, b) => Math.max(a, b), 0);
  return `migrations/${String(last + 1).padStart(4, '0')}_create_pet_notes.sql`;
})();

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
