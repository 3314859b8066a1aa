import fc from 'fast-check';
import type { Operation } from '../../lib/conformance/spec.js';
import {
  ModelMismatch,
  emptyModel,
  statefulCommands,
  type NewPet,
  type Observed,
  type StatefulTransport,
} from '../../lib/conformance/stateful.js';
import { validCases, type GeneratorContext } from '../../lib/conformance/requests.js';
import type { Exchanger } from './exchange.js';
import type { Findings } from './findings.js';

/**
 * The conformance suite's stateful sequences (lib/conformance/stateful.ts)
 * against a deployment: the model knows only what the sequence created or
 * read, so listings are compared on those pets. Read-only runs leave out
 * create and replay. Each answer is checked against the contract by the
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
  context: GeneratorContext;
  readOnly: boolean;
  /** Operations past their sunset: not called. */
  retired: ReadonlySet<string>;
  namePrefix: string;
  keyPrefix: string;
  seed: number;
  /** Requests this part may send. */
  budget: number;
}

function transport(options: SequenceOptions, spent: { requests: number; creates: number }): StatefulTransport {
  return {
    async send(request, url) {
      const operation = options.operations.get(request.operationId);
      if (operation === undefined || spent.requests >= options.budget) return undefined;
      const creates = request.operationId === 'createPet';
      if (creates && spent.creates >= maxCreates) return undefined;
      spent.requests += 1;
      const answer = await options.exchanger.send(
        operation,
        request,
        url === undefined ? {} : { url: options.exchanger.resolve(url) },
      );
      if (answer === undefined) return undefined;
      if (creates && answer.status === 201 && answer.headers.get('idempotent-replayed') === null) {
        spent.creates += 1;
        options.findings.created += 1;
      }
      // The exchanger has recorded the answer's contract problems already.
      const observed: Observed = { status: answer.status, headers: answer.headers, text: answer.text, problems: [] };
      if (answer.json !== undefined) observed.json = answer.json;
      return observed;
    },
  };
}

/** Runs sequences until the budget is spent; returns how many ran. */
export async function runModelSequences(options: SequenceOptions): Promise<{ sequences: number; commands: number }> {
  const createPet = options.operations.get('createPet');
  if (createPet === undefined || options.budget <= 0) return { sequences: 0, commands: 0 };
  const commands = statefulCommands({
    authorization: options.authorization,
    basePath: options.basePath,
    exclusive: false,
    readOnly: options.readOnly,
    retired: options.retired,
    keyPrefix: options.keyPrefix,
    namePrefix: options.namePrefix,
    newPets: validCases(createPet, options.context).map((item) => JSON.parse(String(item.request.body)) as NewPet),
  });
  const spent = { requests: 0, creates: 0 };
  const real = transport(options, spent);
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
