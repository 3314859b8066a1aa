import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '../../src/db/index.js';
import { loadMigrations, migrate } from '../../src/db/migrations.js';

// Creating a PGlite database costs seconds (initdb in WebAssembly); copying a
// migrated one and opening the copy costs a fraction of that. So the
// migrated template is built once, by whichever test process asks first, and
// every embedded test database is a copy of it. Its folder name carries a
// hash of the migrations and the PGlite version, so a changed migration or
// PGlite builds a new template instead of reusing a stale one.

function templateKey(): string {
  const hash = createHash('sha256');
  hash.update(readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url)));
  for (const migration of loadMigrations()) hash.update(`\0${migration.version}\0${migration.sql}`);
  return hash.digest('hex').slice(0, 16);
}

const templateDir = join(tmpdir(), `pets-test-template-${templateKey()}`);
const buildingDir = `${templateDir}.building`;
// A build that has not finished in this time was left by a killed process.
const staleBuildMs = 120_000;

async function build(): Promise<void> {
  const work = join(buildingDir, 'data');
  const db = await openDatabase({ dataDir: work });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  rmSync(join(work, 'pets.lock'), { force: true });
  renameSync(work, templateDir);
}

function claimBuild(): boolean {
  try {
    mkdirSync(buildingDir);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (Date.now() - statSync(buildingDir).mtimeMs > staleBuildMs) {
      rmSync(buildingDir, { recursive: true, force: true });
      return claimBuild();
    }
    return false;
  }
}

async function ensureTemplate(): Promise<string> {
  while (!existsSync(templateDir)) {
    if (claimBuild()) {
      try {
        if (!existsSync(templateDir)) await build();
      } finally {
        rmSync(buildingDir, { recursive: true, force: true });
      }
    } else {
      await sleep(100);
    }
  }
  return templateDir;
}

let ready: Promise<string> | undefined;

/** Fills dataDir (which must not hold a database yet) with a copy of the migrated template. */
export async function copyEmbeddedTemplate(dataDir: string): Promise<void> {
  ready ??= ensureTemplate();
  await cp(await ready, dataDir, { recursive: true });
}
