/**
 * npm run contract -- release
 *
 * Releases the contract as it stands: copies openapi.yaml to
 * contract/released/openapi-<info.version>.yaml, which makes it the baseline
 * of the breaking-change gate (the highest version there). Refuses a version
 * that is not above the last release, one already released, a contract that
 * fails the gate, and a CHANGELOG.md without a "## <version>" entry.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../../lib/repoRoot.js';
import { compareVersions, releasedFile, releasedVersions } from './released.js';

function fail(message: string): never {
  process.stderr.write(`contract release: ${message}\n`);
  process.exit(1);
}

const spec = join(repoRoot, 'openapi.yaml');
const version = String((parse(readFileSync(spec, 'utf8')) as { info?: { version?: unknown } }).info?.version);
if (!/^\d+\.\d+\.\d+$/.test(version)) fail(`info.version ${JSON.stringify(version)} is not MAJOR.MINOR.PATCH`);
const target = releasedFile(version);
if (existsSync(target))
  fail(`${relative(repoRoot, target)} exists: ${version} is released already; raise info.version`);
const latest = releasedVersions().at(-1);
if (latest && compareVersions(version, latest) <= 0)
  fail(`info.version ${version} is not above the last release ${latest}`);
const changelog = readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8');
if (!new RegExp(`^## ${version.replace(/\./g, '\\.')}\\b`, 'm').test(changelog))
  fail(`CHANGELOG.md has no "## ${version}" entry; add one from \`npm run contract -- changelog\``);

const gate = spawnSync('bash', [join(repoRoot, 'scripts/contract-gate.sh')], { cwd: repoRoot, stdio: 'inherit' });
if (gate.status !== 0) fail('the contract gate fails; release nothing until it passes');

copyFileSync(spec, target);
process.stdout.write(
  `Released ${version}: ${relative(repoRoot, target)} is now the baseline of npm run contract -- breaking.\n` +
    `Commit it with CHANGELOG.md: git add ${relative(repoRoot, target)} CHANGELOG.md && git commit -m "Contract ${version}"\n`,
);
