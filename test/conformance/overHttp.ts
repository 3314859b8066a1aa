import fc from 'fast-check';
import type { Test } from 'tap';
import { invalidCases, validCases, type Case, type GeneratorContext } from '../../lib/conformance/requests.js';
import { loadContract } from '../../lib/conformance/spec.js';
import { httpLimits } from '../../src/http/limits.js';
import { ContractClient } from './client.js';

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
 * expects, declared by openapi.yaml and valid against it.
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
  const check = async ({ request, expect }: Case) => {
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
      `${client.sent} generated requests through ${target.through} (seed ${seed}); pairs seen: ${[...client.observed].sort().join(', ')}`,
    );
  } finally {
    client.close();
  }
}
