import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { previousRelease, readReleases } from '../../lib/releases/record.js';
import { summaryPlaceholder } from '../../lib/contract/changelogSection.js';
import { copyOfRepo } from '../helpers/repoCopy.js';

/**
 * npm run contract -- release in a copy of this repository: the release is
 * recorded with its commit in contract/releases.json, its CHANGELOG section
 * dated, the start line and README say released, and the record then names
 * the previous release.
 */

const day = () => new Date().toISOString().slice(0, 10);

t.test('a release records its version and commit, and the service version follows it', async (t) => {
  const copy = copyOfRepo();
  t.teardown(copy.remove);
  const released = previousRelease(copy.root)!;
  const next = `${released.version.split('.')[0]}.${Number(released.version.split('.')[1]) + 1}.0`;
  const spec = join(copy.root, 'openapi.yaml');
  writeFileSync(spec, readFileSync(spec, 'utf8').replace(/^( {2}version: )\S+$/m, `$1${next}`));
  const changelog = join(copy.root, 'CHANGELOG.md');
  t.equal(copy.run('bash', ['scripts/run.sh', 'generate']).status, 0, 'the generated files follow the version');
  t.match(readFileSync(changelog, 'utf8'), `## ${next} (unreleased)`, 'the section under way is marked unreleased');
  // A section npm run generate had to create carries a placeholder the gate refuses: the summary is a writer's.
  writeFileSync(changelog, readFileSync(changelog, 'utf8').replace(summaryPlaceholder, 'No change to the operations.'));
  // --allow-empty: when the tree's version is already the one under way, npm run generate has nothing to change.
  copy.git('commit', '--quiet', '--allow-empty', '-am', `Contract ${next}`);
  const commit = copy.git('rev-parse', 'HEAD');
  const before = day();

  const release = copy.run('bash', ['scripts/run.sh', 'contract', 'release']);
  if (release.status !== 0) t.comment(release.output);
  t.equal(release.status, 0, 'npm run contract -- release passes');
  const last = readReleases(copy.root).at(-1);
  t.equal(last?.version, next, 'contract/releases.json records the version');
  t.equal(last?.commit, commit, '... and the full commit released (HEAD)');
  t.ok(last && [before, day()].includes(last.date), `... and the day (${last?.date})`);
  t.same(readReleases(copy.root).slice(0, -1), readReleases(), 'earlier releases stay as they were');
  const version = (file: string) =>
    (JSON.parse(readFileSync(join(copy.root, file), 'utf8')) as { version: string }).version;
  t.equal(version('package.json'), next, 'package.json has the release version');
  t.equal(version('package-lock.json'), next, 'package-lock.json too');
  t.same(
    JSON.parse(readFileSync(join(copy.root, 'src/generated/release.json'), 'utf8')),
    { version: next, released: true, lastRelease: next },
    'the start line says it is released',
  );
  t.match(readFileSync(changelog, 'utf8'), `## ${next} (${last?.date})`, 'its CHANGELOG section is dated');
  t.match(readFileSync(join(copy.root, 'README.md'), 'utf8'), `<!-- info.version -->${next}<!-- /info.version -->`);
  t.equal(
    readFileSync(join(copy.root, 'contract', 'released', `openapi-${next}.yaml`), 'utf8'),
    readFileSync(spec, 'utf8'),
    'the contract is the new baseline',
  );

  const again = copy.run('bash', ['scripts/run.sh', 'contract', 'release']);
  t.equal(again.status, 1, 'the same version is not released twice');
  t.match(again.output, `is released already`);

  copy.git('add', '-A');
  copy.git('commit', '--quiet', '-m', `Release ${next}`);
  writeFileSync(spec, readFileSync(spec, 'utf8').replace(/^( {2}version: )\S+$/m, '$19.9.9'));
  const uncommitted = copy.run('bash', ['scripts/run.sh', 'contract', 'release']);
  t.equal(uncommitted.status, 1, 'a contract the commit does not serve is not released');
  t.match(uncommitted.output, /openapi\.yaml at [0-9a-f]{12} is not the one here/);
});
