import fc from 'fast-check';
import type { Operation } from '../../lib/conformance/spec.js';
import {
  ModelMismatch,
  emptyModel,
  statefulCommands,
  type Observed,
  type StatefulTransport,
} from '../../lib/conformance/stateful.js';
import { resourceKinds } from '../../lib/conformance/resources.js';
import type { Exchanger } from './exchange.js';
import type { Findings } from './findings.js';

/**
 * The conformance suite's stateful sequences (lib/conformance/stateful.ts)
 * against a deployment: the model knows only what the sequence created or
 * read, so listings are compared on those resources. Read-only runs leave
 * out every unsafe command; the others aim unsafe requests only at what the
 * sequence made. Each answer is checked against the contract by the
 * exchanger; a disagreement with the model is a failure of its own.
 */

// Short sequences, so that several fit in the budget's share.
const maxCommands = 12;
// Staging keeps what a run creates: a bound on it.
const maxCreates = 15;

export interface SequenceOptions {
  exchanger: Exchanger;
  findings: Findings;
  operations: Map<string, Operation>;
  authorization: string;
  basePath: string;
  readOnly: boolean;
  /** Operations past their sunset: not called. */
  retired: ReadonlySet<string>;
  namePrefix: string;
  keyPrefix: string;
  seed: number;
  /** Requests this part may send. */
  budget: number;
}

function transport(
  options: SequenceOptions,
  makers: Map<string, number>,
  spent: { requests: number; creates: number },
): StatefulTransport {
  return {
    async send(request, url) {
      const operation = options.operations.get(request.operationId);
      if (operation === undefined || spent.requests >= options.budget) return undefined;
      const makes = makers.get(request.operationId);
      if (makes !== undefined && spent.creates >= maxCreates) return undefined;
      spent.requests += 1;
      const answer = await options.exchanger.send(
        operation,
        request,
        url === undefined ? {} : { url: options.exchanger.resolve(url) },
      );
      if (answer === undefined) return undefined;
      if (makes === answer.status && answer.headers.get('idempotent-replayed') === null) {
        spent.creates += 1;
        options.findings.made(operation.operationId);
      }
      // The exchanger has recorded the answer's contract problems already.
      const observed: Observed = { status: answer.status, headers: answer.headers, text: answer.text, problems: [] };
      if (answer.json !== undefined) observed.json = answer.json;
      if (answer.bytes !== undefined) observed.bytes = answer.bytes;
      return observed;
    },
  };
}

/** Runs sequences until the budget is spent; returns how many ran. */
export async function runModelSequences(options: SequenceOptions): Promise<{ sequences: number; commands: number }> {
  const operations = [...options.operations.values()];
  // What creates: each maker's success, and any 201 (Created, RFC 9110 15.3.2), under a resource too.
  const makers = new Map([
    ...operations
      .filter((operation) => operation.responses.has('201'))
      .map((operation) => [operation.operationId, 201] as const),
    ...resourceKinds(operations).flatMap((kind) =>
      kind.makers.map((maker) => [maker.operation.operationId, maker.status] as const),
    ),
  ]);
  const commands = statefulCommands({
    operations,
    authorization: options.authorization,
    basePath: options.basePath,
    exclusive: false,
    readOnly: options.readOnly,
    retired: options.retired,
    keyPrefix: options.keyPrefix,
    namePrefix: options.namePrefix,
  });
  if (commands.length === 0 || options.budget <= 0) return { sequences: 0, commands: 0 };
  const spent = { requests: 0, creates: 0 };
  const real = transport(options, makers, spent);
  const sequences = fc.sample(fc.commands(commands, { maxCommands }), { numRuns: 50, seed: options.seed });
  let ran = 0;
  let commandCount = 0;
  for (const sequence of sequences) {
    if (spent.requests >= options.budget) break;
    ran += 1;
    commandCount += [...sequence].length;
    try {
      await fc.asyncModelRun(() => ({ model: emptyModel(), real }), sequence);
    } catch (error) {
      if (!(error instanceof ModelMismatch)) throw error;
      options.findings.fail({
        subject: 'stateful sequence',
        check: 'model of the store',
        message: `${error.message}\n  sequence: ${sequence.toString()}`,
      });
    }
  }
  return { sequences: ran, commands: commandCount };
}
