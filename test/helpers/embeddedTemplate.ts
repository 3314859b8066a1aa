import { createHash } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  constants,
  cpSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { join } from 'node:path';
import { lock } from 'os-lock';
import { openDatabase, type Database } from '../../src/db/index.js';
import { loadMigrations, migrate } from '../../src/db/migrations.js';
import { scratchRoot } from './scratchSpace.js';

// Creating a PGlite database costs seconds (initdb in WebAssembly); copying a
// migrated one and opening the copy costs a fraction of that. So the
// templates are built once, by whichever test process asks first, and
// every embedded test database is a copy of one. Its folder name carries a
// hash of the migrations, the PGlite version and the settings below, so a
// changed migration or PGlite builds a new template instead of reusing a stale one.

// PostgreSQL's default 128 MB buffer pool is allocated and zeroed inside
// PGlite's WebAssembly memory at every open: 450 ms of CPU per test database
// (measured: open 700 -> 250 ms). A test database holds a few hundred rows.
const testDatabaseSettings = 'shared_buffers = 16MB\n';

function templateKey(): string {
  const hash = createHash('sha256');
  hash.update(readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url)));
  hash.update(testDatabaseSettings);
  for (const migration of loadMigrations()) hash.update(`\0${migration.version}\0${migration.sql}`);
  return hash.digest('hex').slice(0, 16);
}

const templatePrefix = 'pets-test-template-';
const templateDir = join(scratchRoot, `${templatePrefix}${templateKey()}`);
const buildingDir = `${templateDir}.building`;
// The builder holds an fcntl lock on this file while it builds; the kernel
// releases it when the builder ends, however it ends (kill -9 included), so a
// waiting process waits exactly as long as a live builder needs.
const buildLock = `${templateDir}.lock`;
// Templates live in memory (scratchSpace.ts) and each changed migration makes
// a new one, 78 MB. One no run has used for this long (each run marks its own
// in use) belongs to an old checkout and goes when a new one is built.
const unusedTemplateMs = 60 * 60_000;

function removeUnusedTemplates(): void {
  for (const name of readdirSync(scratchRoot)) {
    const path = join(scratchRoot, name);
    // A lock file stays (empty; another checkout's builder may hold it).
    if (!name.startsWith(templatePrefix) || name.endsWith('.lock') || path.startsWith(templateDir)) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > unusedTemplateMs) rmSync(path, { recursive: true, force: true });
    } catch {
      // Best effort: another run removed it first, or another user owns it.
    }
  }
}

/** Closes a just-opened embedded database and leaves its folder ready to copy. */
async function closeForCopy(dataDir: string, db: Database): Promise<void> {
  await db.close();
  rmSync(join(dataDir, 'pets.lock'), { force: true });
}

/** Builds both templates: "empty" (initdb only, for migration tests) and "migrated". */
async function build(): Promise<void> {
  const work = join(buildingDir, 'template');
  const empty = join(work, 'empty');
  await closeForCopy(empty, await openDatabase({ dataDir: empty }));
  appendFileSync(join(empty, 'pgdata', 'postgresql.conf'), testDatabaseSettings);
  const migrated = join(work, 'migrated');
  cpSync(empty, migrated, { recursive: true });
  const db = await openDatabase({ dataDir: migrated });
  try {
    await migrate(db);
  } finally {
    await closeForCopy(migrated, db);
  }
  try {
    renameSync(work, templateDir);
  } catch (error) {
    // A checkout whose copy of this file predates the lock may have built it meanwhile: theirs serves.
    if (!existsSync(templateDir)) throw error;
  }
}

/** Dates the template's folder now, so removeUnusedTemplates leaves it be. */
function markInUse(dir: string): void {
  try {
    const now = new Date();
    utimesSync(dir, now, now);
  } catch {
    // Another user's template: that user's runs keep it dated.
  }
}

async function ensureTemplate(): Promise<string> {
  if (!existsSync(templateDir)) {
    const fd = openSync(buildLock, constants.O_RDWR | constants.O_CREAT, 0o600);
    try {
      // Waits while another process builds (no timeout needed: its lock goes when it ends).
      await lock(fd, { exclusive: true });
      if (!existsSync(templateDir)) {
        removeUnusedTemplates();
        // Left by a builder that was killed, if there.
        rmSync(buildingDir, { recursive: true, force: true });
        try {
          await build();
        } finally {
          rmSync(buildingDir, { recursive: true, force: true });
        }
      }
    } finally {
      // Closing the descriptor releases the lock.
      closeSync(fd);
    }
  }
  markInUse(templateDir);
  return templateDir;
}

let ready: Promise<string> | undefined;

/**
 * Fills dataDir (which must not hold a database yet) with a copy of a
 * template: "migrated" (every migration applied) or "empty" (a new database,
 * no migration applied: initdb costs 5 s of CPU, a copy a tenth of that).
 */
export async function copyEmbeddedTemplate(dataDir: string, which: 'migrated' | 'empty' = 'migrated'): Promise<void> {
  ready ??= ensureTemplate();
  // Synchronous on purpose: fs.promises.cp hops to the thread pool for each
  // of the 1,021 files, 210 ms against cpSync's 40 ms on tmpfs (measured).
  cpSync(join(await ready, which), dataDir, { recursive: true });
}
