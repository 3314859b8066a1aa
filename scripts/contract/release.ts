/**
 * npm run contract -- release [--commit REV]
 *
 * Cuts a release of the contract and the service at a git commit (HEAD by
 * default): copies openapi.yaml to contract/released/openapi-<info.version>.yaml
 * (the breaking-change gate's new baseline), records the version, the full
 * commit and the day in contract/releases.json (what `npm run check:migrations`
 * and the upgrade drill call the previous release), dates its CHANGELOG.md
 * section, and regenerates what states whether the version is released
 * (package.json already carries info.version: npm run generate writes it). Refuses a version that is not above
 * the last release, one already released, a commit whose openapi.yaml is not
 * this one, a contract that fails the gate, and a CHANGELOG.md without a
 * "## <version>" entry (exit 1); an option it does not know is the usage line, exit 2.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { appendRelease, git, readReleases, releasesFile, resolveCommit } from '../../lib/releases/record.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { compareVersions, releasedFile, releasedVersions } from '../../lib/contract/released.js';
import { parseOptions, UsageError } from './commandLine.js';

function fail(message: string): never {
  process.stderr.write(`contract release: ${message}\n`);
  process.exit(1);
}

let values: { commit?: string };
try {
  values = parseOptions(process.argv.slice(2), { commit: { type: 'string', default: 'HEAD' } });
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`contract release: ${error.message}\nusage: npm run contract -- release [--commit REV]\n`);
  process.exit(2);
}
let commit: string;
try {
  commit = resolveCommit(values.commit ?? 'HEAD');
} catch (error) {
  fail((error as Error).message);
}

const spec = join(repoRoot, 'openapi.yaml');
const text = readFileSync(spec, 'utf8');
const version = String((parse(text) as { info?: { version?: unknown } }).info?.version);
if (!/^\d+\.\d+\.\d+$/.test(version)) fail(`info.version ${JSON.stringify(version)} is not MAJOR.MINOR.PATCH`);
const target = releasedFile(version);
if (existsSync(target))
  fail(`${relative(repoRoot, target)} exists: ${version} is released already; raise info.version`);
const latest = releasedVersions().at(-1);
if (latest && compareVersions(version, latest) <= 0)
  fail(`info.version ${version} is not above the last release ${latest}`);
const recorded = readReleases().find((release) => release.version === version || release.commit === commit);
if (recorded) fail(`contract/releases.json already records ${recorded.version} at ${recorded.commit}`);
if (git(['show', `${commit}:openapi.yaml`]) !== text.trim())
  fail(`openapi.yaml at ${commit.slice(0, 12)} is not the one here: release the commit that serves this contract`);
const changelog = readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8');
if (!new RegExp(`^## ${version.replace(/\./g, '\\.')}\\b`, 'm').test(changelog))
  fail(`CHANGELOG.md has no "## ${version}" entry; add one from \`npm run contract -- changelog\``);

const gate = spawnSync('bash', [join(repoRoot, 'scripts/contract-gate.sh')], { cwd: repoRoot, stdio: 'inherit' });
if (gate.status !== 0) fail('the contract gate fails; release nothing until it passes');

copyFileSync(spec, target);
const date = new Date().toISOString().slice(0, 10);
appendRelease({ version, commit, date });
// The section stops being the one under way: its heading says the day, and npm run generate leaves it alone.
writeFileSync(
  join(repoRoot, 'CHANGELOG.md'),
  changelog.replace(
    new RegExp(`^## ${version.replace(/\./g, '\\.')} \\(unreleased\\)$`, 'm'),
    `## ${version} (${date})`,
  ),
);
// The version the README states and the start line says (src/generated/release.json) are now released.
const generated = spawnSync('npx', ['--no-install', 'tsx', join(repoRoot, 'generators/docFacts.ts')], {
  cwd: repoRoot,
  stdio: 'inherit',
});
if (generated.status !== 0) fail('generators/docFacts.ts failed: run npm run generate');
const files = [target, releasesFile(), join(repoRoot, 'src/generated/release.json'), join(repoRoot, 'README.md')]
  .map((file) => relative(repoRoot, file))
  .join(' ');
process.stdout.write(
  `Released ${version} at ${commit.slice(0, 12)}: ${relative(repoRoot, target)} is now the baseline of npm run contract -- breaking,\n` +
    `contract/releases.json names it the previous release (npm run check:migrations); the start line and README say released.\n` +
    `Commit them with CHANGELOG.md: git add ${files} CHANGELOG.md && git commit -m "Release ${version}"\n`,
);
