import { execFile } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { repoRoot } from '../../lib/repoRoot.js';

const spectral = join(repoRoot, 'node_modules/.bin/spectral');
const violations = 'test/fixtures/spectral/custom-rules-violations.yaml';

interface Finding {
  code: string;
  path: string[];
  source: string;
}

function lint(files: string[]): Promise<Finding[]> {
  return new Promise((resolve, reject) => {
    // Spectral exits non-zero when it finds errors, which is the point here;
    // only unparseable output means the run itself failed.
    execFile(
      spectral,
      ['lint', ...files, '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet'],
      { cwd: repoRoot },
      (error, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout) as Finding[]);
        } catch {
          reject(new Error(`spectral gave no JSON (${error?.message ?? 'no error'}): ${stderr}`));
        }
      },
    );
  });
}

// One Spectral process for both files (its start-up is most of its 2.5 s of CPU); each finding names its file.
const findings = lint([violations, 'openapi.yaml']);
findings.catch(() => undefined); // each test that awaits it fails with the reason
const ours = async (file: string) =>
  (await findings).filter((finding) => finding.source === join(repoRoot, file) && finding.code.startsWith('pets-'));

t.test('each custom rule fires on the operation that breaks it, and only there', async (t) => {
  t.same((await ours(violations)).map((finding) => `${finding.code} ${finding.path[1]}`).sort(), [
    'pets-deprecated-sunset /deprecated-with-bad-sunset',
    'pets-deprecated-sunset /deprecated-without-sunset',
    'pets-operation-error-responses /no-401',
    'pets-operation-id /no-operation-id',
    'pets-operation-slo /no-slo',
    'pets-operation-slo /slo-out-of-range',
    'pets-operation-summary /no-summary',
    'pets-stability-values /unknown-stability',
    'pets-string-limit /unbounded-string',
  ]);
});

t.test('openapi.yaml passes the custom rules', async (t) => {
  t.ok(
    (await findings).some((finding) => finding.source === join(repoRoot, violations)),
    'findings name their file',
  );
  t.same(await ours('openapi.yaml'), []);
});
