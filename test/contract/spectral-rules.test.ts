import { execFile } from 'node:child_process';
import { join } from 'node:path';
import t from 'tap';
import { repoRoot } from '../../lib/repoRoot.js';

const spectral = join(repoRoot, 'node_modules/.bin/spectral');

interface Finding {
  code: string;
  path: string[];
}

function lint(file: string): Promise<Finding[]> {
  return new Promise((resolve, reject) => {
    // Spectral exits non-zero when it finds errors, which is the point here;
    // only unparseable output means the run itself failed.
    execFile(
      spectral,
      ['lint', file, '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet'],
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

t.test('each custom rule fires on the operation that breaks it, and only there', async (t) => {
  const findings = await lint('test/fixtures/spectral/custom-rules-violations.yaml');
  const ours = findings
    .filter((finding) => finding.code.startsWith('pets-'))
    .map((finding) => `${finding.code} ${finding.path[1]}`)
    .sort();
  t.same(ours, [
    'pets-deprecated-sunset /deprecated-with-bad-sunset',
    'pets-deprecated-sunset /deprecated-without-sunset',
    'pets-operation-error-responses /no-401',
    'pets-operation-id /no-operation-id',
    'pets-operation-slo /no-slo',
    'pets-operation-slo /slo-out-of-range',
    'pets-operation-summary /no-summary',
    'pets-stability-values /unknown-stability',
  ]);
});

t.test('openapi.yaml passes the custom rules', async (t) => {
  const findings = await lint('openapi.yaml');
  t.same(
    findings.filter((finding) => finding.code.startsWith('pets-')),
    [],
  );
});
