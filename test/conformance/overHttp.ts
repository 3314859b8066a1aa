import fc from 'fast-check';
import type { Test } from 'tap';
import {
  aimAtOwn,
  invalidCases,
  validCases,
  type Case,
  type GeneratorContext,
} from '../../lib/conformance/requests.js';
import { isSafe } from '../../lib/conformance/resources.js';
import { loadContract, type Operation, type Parameter } from '../../lib/conformance/spec.js';
import { httpLimits } from '../../src/http/limits.js';
import { ContractClient } from './client.js';
import { makeResource } from './steps.js';

// Resources made per path parameter for the unsafe requests to name: a few, so that one DELETE does not end them.
const ownPerParameter = 3;

/**
 * Makes the resources the run's unsafe requests may name (aimAtOwn): for
 * each path parameter of an operation with an unsafe method, a few made
 * through the operation the spec says makes them. A parameter nothing makes
 * gets none, and the requests that would name one are not sent.
 */
async function ownResources(
  client: ContractClient,
  operations: Operation[],
  key: string,
  seed: number,
): Promise<(parameter: Parameter) => string | undefined> {
  const pools = new Map<string, string[]>();
  for (const operation of operations.filter((candidate) => !isSafe(candidate)))
    for (const parameter of operation.parameters.filter((declared) => declared.in === 'path')) {
      if (pools.has(parameter.name)) continue;
      const ids: string[] = [];
      for (let index = 0; index < ownPerParameter; index += 1)
        ids.push(await makeResource(client, operations, parameter.name, key, seed + index).catch(() => ''));
      pools.set(
        parameter.name,
        ids.filter((id) => id !== ''),
      );
    }
  let turn = 0;
  return (parameter) => {
    const ids = pools.get(parameter.name) ?? [];
    turn += 1;
    return ids.length === 0 ? undefined : ids[turn % ids.length];
  };
}

/** Where the generated requests go, and how many of each kind. */
export interface DeploymentUnderTest {
  /** Scheme, host and port (`http://127.0.0.1:8080`). */
  origin: string;
  /** The API's base path (`/v1`). */
  basePath: string;
  apiKey: string;
  /** Runs per property (valid, invalid) of each operation. */
  runs: number;
  /** Names what the requests went through, in the closing comment. */
  through: string;
}

/**
 * The conformance suite's generated requests (valid and invalid) for every operation, sent over HTTP to a running deployment (an
 * image, the topology's balancer): every answer must be a status the case
 * expects, declared by openapi.yaml and valid against it. A request with an
 * unsafe method that names a resource names one this run made (aimAtOwn).
 */
export async function checkGeneratedRequests(t: Test, target: DeploymentUnderTest): Promise<void> {
  const { operations } = loadContract();
  const client = new ContractClient(target.origin, target.basePath, operations);
  const seed = Date.now() ^ (Math.random() * 0x100000000);
  const context: GeneratorContext = {
    key: target.apiKey,
    // Fixed in the service, not a setting: every deployment refuses larger bodies (413) alike.
    bodyLimit: httpLimits.bodyLimitBytes,
  };
  const own = await ownResources(client, operations, target.apiKey, seed);
  let unaimed = 0;
  const check = async ({ request: generated, expect }: Case) => {
    const request = aimAtOwn(client.operation(generated.operationId), generated, own);
    if (request === undefined) {
      unaimed += 1;
      return;
    }
    const response = await client.send(request);
    if (response.problems.length > 0)
      throw new Error(
        `${request.intent}: ${response.status} ${response.text.slice(0, 300)}\n${response.problems.join('\n')}`,
      );
    if (!expect.includes(response.status))
      throw new Error(
        `${request.intent}: expected ${expect.join(' or ')}, got ${response.status} ${response.text.slice(0, 300)}`,
      );
  };
  try {
    for (const operation of operations) {
      const properties: Array<[string, fc.Arbitrary<Case>, number]> = [
        ['valid', validCases(operation, context), target.runs],
        ['invalid', invalidCases(operation, context), target.runs],
      ];
      for (const [kind, arbitrary, numRuns] of properties) {
        const details = await fc.check(fc.asyncProperty(arbitrary, check), { numRuns, seed });
        t.notOk(
          details.failed,
          `${operation.operationId} ${kind}: ${details.numRuns} runs`,
          details.failed
            ? {
                seed: details.seed,
                counterexample: JSON.stringify(details.counterexample),
                error: String(details.errorInstance),
              }
            : {},
        );
      }
    }
    t.comment(
      `${client.sent} generated requests through ${target.through} (seed ${seed}), ${unaimed} not sent (unsafe, ` +
        `naming a resource the run did not make); pairs seen: ${[...client.observed].sort().join(', ')}`,
    );
  } finally {
    client.close();
  }
}
