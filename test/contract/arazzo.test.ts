import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { clientIdOf, isSafe, kindAt, resourceKinds } from '../../lib/conformance/resources.js';
import { loadContract, type Operation } from '../../lib/conformance/spec.js';
import { specWithOwners } from '../conformance/ownersFixture.js';
import { specWithUnsafeOperations } from '../conformance/unsafeFixture.js';
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
  parameters?: Array<{ name?: string; in?: string; value?: unknown; reference?: string }>;
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

/**
 * Steps with an unsafe method on a path that names a resource whose path
 * value is not an output of an earlier step of the same workflow: such a
 * step would change or remove what a deployment held before the run. The
 * same reading as the other tools' (lib/conformance/resources.ts): the id of
 * a create-only PUT (`If-None-Match: *`) is one the workflow chose, and what
 * lies under parents an earlier step made is the workflow's.
 */
function foreignUnsafeSteps(arazzo: Arazzo, operations: Operation[]): string[] {
  const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  const kinds = resourceKinds(operations);
  const found: string[] = [];
  for (const workflow of arazzo.workflows) {
    const earlier: string[] = [];
    for (const step of workflow.steps) {
      const operation = byId.get((step.operationId ?? '').split('.')[1] ?? '');
      const given = (name: string, where: string) =>
        step.parameters?.find(
          (parameter) =>
            parameter.in === where &&
            // Header names are case-insensitive (RFC 9110 5.1).
            (where === 'header' ? parameter.name?.toLowerCase() === name : parameter.name === name),
        )?.value;
      const made = (name: string) => {
        const value = given(name, 'path');
        const source = typeof value === 'string' ? /^\$steps\.([^.]+)\.outputs\./.exec(value)?.[1] : undefined;
        return source !== undefined && earlier.includes(source);
      };
      if (operation && !isSafe(operation)) {
        const createOnly = given('if-none-match', 'header') === '*' ? clientIdOf(operation)?.name : undefined;
        for (const parameter of operation.parameters.filter((declared) => declared.in === 'path')) {
          const parents = kindAt(kinds, operation.path, parameter.name)?.makers.find(
            (maker) => maker.parents.length > 0,
          )?.parents;
          const underOwn = parents !== undefined && !parents.includes(parameter.name) && parents.every(made);
          if (!made(parameter.name) && parameter.name !== createOnly && !underOwn)
            found.push(
              `${workflow.workflowId}.${step.stepId}: ${parameter.name} = ${JSON.stringify(given(parameter.name, 'path'))}`,
            );
        }
      }
      earlier.push(step.stepId);
    }
  }
  return found;
}

t.test('a create-only PUT names an id the workflow chose; what is under its own is its own', async (t) => {
  const owners = loadContract(specWithOwners()).operations;
  const step = (stepId: string, operationId: string, parameters: NonNullable<Step['parameters']>): Step => ({
    stepId,
    operationId: `pets.${operationId}`,
    parameters,
  });
  const ownerId = (value: unknown) => ({ name: 'ownerId', in: 'path', value });
  const createOnly = { name: 'If-None-Match', in: 'header', value: '*' };
  const sample: Arazzo = {
    sourceDescriptions: [],
    workflows: [
      {
        workflowId: 'adopt',
        steps: [
          step('owner', 'putOwner', [ownerId('$inputs.ownerId'), createOnly]),
          step('pet', 'createPet', []),
          step('adopt', 'putAdoption', [
            ownerId('$steps.owner.outputs.ownerId'),
            { name: 'petId', in: 'path', value: '$steps.pet.outputs.petId' },
          ]),
          step('release', 'deleteAdoption', [
            ownerId('$steps.owner.outputs.ownerId'),
            { name: 'petId', in: 'path', value: 7 },
          ]),
        ],
      },
      { workflowId: 'replace', steps: [step('owner', 'putOwner', [ownerId('$inputs.ownerId')])] },
    ],
  };
  t.same(
    foreignUnsafeSteps(sample, owners),
    ['replace.owner: ownerId = "$inputs.ownerId"'],
    'only the PUT that may replace an owner the workflow did not make is refused',
  );
});

t.test('an unsafe step names only a resource an earlier step of its workflow made', async (t) => {
  t.same(foreignUnsafeSteps(workflows(), loadContract().operations), [], 'pets.arazzo.yaml');
  const fixture = loadContract(specWithUnsafeOperations()).operations;
  const step = (stepId: string, operationId: string, value: unknown): Step => ({
    stepId,
    operationId: `pets.${operationId}`,
    parameters: [{ name: 'petId', in: 'path', value }],
  });
  const sample: Arazzo = {
    sourceDescriptions: [],
    workflows: [
      {
        workflowId: 'removeWhatItMade',
        steps: [
          { stepId: 'create', operationId: 'pets.createPet' },
          step('remove', 'deletePet', '$steps.create.outputs.petId'),
        ],
      },
      { workflowId: 'removePetOne', steps: [step('remove', 'deletePet', 1), step('read', 'getPet', 1)] },
    ],
  };
  t.same(
    foreignUnsafeSteps(sample, fixture),
    ['removePetOne.remove: petId = 1'],
    'a literal id is refused, a read is not',
  );
});
