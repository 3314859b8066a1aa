import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { loadContract } from '../../lib/conformance/spec.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { arazzoPath } from '../../src/openapi/files.js';

/**
 * pets.arazzo.yaml, the consumers' journeys: Redocly's Arazzo lint passes,
 * it runs as docs/contract.md says (source `pets`, input `apiKey`), and every
 * step names an operation openapi.yaml has. Running it against the service is
 * npm run contract -- testers respect (CI).
 */
interface Step {
  stepId: string;
  operationId?: string;
  operationPath?: string;
  workflowId?: string;
}
interface Arazzo {
  sourceDescriptions: Array<{ name: string; url: string; type: string }>;
  workflows: Array<{ workflowId: string; inputs?: unknown; steps: Step[] }>;
  components?: { inputs?: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
}

const workflows = () => parse(readFileSync(arazzoPath, 'utf8')) as Arazzo;

t.test('redocly lint passes on it, warnings included', async (t) => {
  const output = await new Promise<{ code: number; text: string }>((resolve) => {
    execFile(
      join(repoRoot, 'node_modules/.bin/redocly'),
      ['lint', arazzoPath, '--format', 'stylish'],
      { cwd: repoRoot, env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_TELEMETRY: 'off' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, text: stdout + stderr });
      },
    );
  });
  t.equal(output.code, 0, 'no error', { output: output.text });
  t.match(output.text, /Your API description is valid/, 'valid', { output: output.text });
  t.notMatch(output.text, /You have \d+ warnings?/, 'no warning', { output: output.text });
});

t.test('its one source is openapi.yaml, named pets, and every workflow takes the key as apiKey', async (t) => {
  const arazzo = workflows();
  t.same(
    arazzo.sourceDescriptions.map(({ name, url, type }) => ({ name, url, type })),
    [{ name: 'pets', url: './openapi.yaml', type: 'openapi' }],
  );
  const apiKey = arazzo.components?.inputs?.['apiKey'];
  t.same(apiKey?.required, ['apiKey']);
  t.ok(arazzo.workflows.length >= 4, `${arazzo.workflows.length} workflows`);
  for (const workflow of arazzo.workflows)
    t.same(workflow.inputs, { $ref: '#/components/inputs/apiKey' }, `${workflow.workflowId} takes apiKey`);
});

t.test('every step names an operationId that openapi.yaml has', async (t) => {
  const operationIds = new Set(loadContract().operations.map((operation) => operation.operationId));
  const steps = workflows().workflows.flatMap((workflow) => workflow.steps);
  t.ok(steps.length > 0);
  for (const step of steps) {
    t.notOk(step.operationPath ?? step.workflowId, `${step.stepId} names an operation by its id`);
    const [source, operationId] = (step.operationId ?? '').split('.');
    t.equal(source, 'pets', `${step.stepId}: the operation of the source pets`);
    t.ok(operationIds.has(operationId ?? ''), `${step.stepId}: ${operationId} is an operation of openapi.yaml`);
  }
});
