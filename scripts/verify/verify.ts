import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse } from 'yaml';
import type { TestRequest } from '../../lib/conformance/checks.js';
import { invalidCases, validCases, type Case, type GeneratorContext } from '../../lib/conformance/requests.js';
import { loadContract, readLocalSpec, type Operation } from '../../lib/conformance/spec.js';
import type { Json } from '../../lib/openapi/dereference.js';
import { httpLimits } from '../../src/http/limits.js';
import { specPath } from '../../src/openapi/files.js';
import { Exchanger } from './exchange.js';
import { Findings } from './findings.js';
import { PoliteClient } from './http.js';
import { specDifferences } from './specDiff.js';
import { runModelSequences } from './sequences.js';
import { etagRoundTrip, idempotentReplay, walkPages, type StepContext } from './steps.js';

export interface VerifyOptions {
  /** The API's base URL, e.g. https://staging.api.petstore.example.com/v1. */
  baseUrl: string;
  apiKey: string;
  /** Production: send nothing that can write. */
  readOnly: boolean;
  maxRequests: number;
  seed: number;
  /** Tests only: the clock sunsets are compared with. */
  now?: () => number;
  /** Tests only: how a Retry-After is waited out. */
  wait?: (seconds: number) => Promise<void>;
}

/** The prefix of every pet a write-mode run creates, so that staging's data says where it came from. */
export const createdPetPrefix = 'contract-verify';
// Staging keeps what a run creates: a bound on it, whatever the budget.
const maxGeneratedCreates = 25;
const safeMethods = new Set(['GET', 'HEAD']);
// The share of --max-requests kept for the stateful sequences, which run last.
const sequencesShare = 0.25;

/** The published contract (GET <base>/openapi.json) against openapi.yaml here: a difference is the first finding. */
async function comparePublished(client: PoliteClient, findings: Findings, base: string): Promise<void> {
  const url = `${base.replace(/\/$/, '')}/openapi.json`;
  const response = await client.send({ method: 'GET', url, headers: { accept: 'application/json' } });
  const subject = 'published contract';
  const curl = `curl -sS ${JSON.stringify(url)}`;
  if (response === undefined) return;
  let published: Json;
  try {
    if (response.status !== 200) throw new Error('not published');
    JSON.parse(response.text);
    // Read again with exact integers: a deployment that rounds the int64 bounds publishes another contract.
    published = parse(response.text, { intAsBigInt: true }) as Json;
  } catch {
    findings.fail({
      subject,
      status: response.status,
      check: 'published contract',
      message: `${url} answered ${response.status}, not the contract as JSON`,
      curl,
    });
    return;
  }
  const local = parse(readFileSync(specPath, 'utf8'), { intAsBigInt: true }) as Json;
  const differences = specDifferences(local, published);
  if (differences.length > 0)
    findings.fail({
      subject,
      check: 'published contract',
      message: `the deployment publishes another contract than this checkout's openapi.yaml:\n  ${differences.join('\n  ')}`,
      curl,
    });
}

/** A createPet request's name under the run's prefix, within the name's maxLength. */
function prefixed(request: TestRequest, prefix: string, maxLength: number): TestRequest {
  const body = JSON.parse(String(request.body)) as { name: string };
  const name = [...`${prefix} ${body.name}`].slice(0, maxLength).join('');
  return { ...request, body: JSON.stringify({ ...body, name }) };
}

interface Arbitraries {
  valid: fc.Arbitrary<Case>;
  invalid: fc.Arbitrary<Case>;
}
const built = new Map<string, Arbitraries>();

/** An operation's request generators, built once per key (building them samples the schemas' patterns). */
function arbitraries(operation: Operation, context: GeneratorContext): Arbitraries {
  const name = `${operation.operationId} ${context.key}`;
  let found = built.get(name);
  if (found === undefined) {
    found = {
      valid: validCases(operation, context),
      invalid: invalidCases(operation, context),
    };
    built.set(name, found);
  }
  return found;
}

/** The generated requests of every operation, interleaved so that a small budget still reaches each one. */
function generatedCases(
  operations: Operation[],
  context: GeneratorContext,
  readOnly: boolean,
  runs: number,
  seed: number,
) {
  const streams = operations.map((operation) => {
    const writes = !safeMethods.has(operation.method);
    // Read-only: of an operation that writes, only requests the contract refuses before any write.
    const valid = readOnly && writes ? [] : fc.sample(arbitraries(operation, context).valid, { numRuns: runs, seed });
    const invalid = fc
      .sample(arbitraries(operation, context).invalid, { numRuns: runs * 2, seed })
      .filter((item) => !readOnly || !writes || item.expect.every((status) => status >= 400));
    return { operation, order: [valid, invalid] };
  });
  const rounds: Array<{ operation: Operation; item: Case }> = [];
  for (let index = 0; ; index += 1) {
    let added = false;
    for (const { operation, order } of streams) {
      for (const list of order) {
        const item = list[index];
        if (item !== undefined) {
          rounds.push({ operation, item });
          added = true;
        }
      }
    }
    if (!added) break;
  }
  return rounds;
}

let compiled: Operation[] | undefined;

/** openapi.yaml here, its schemas compiled once per process (close to a second of ajv). */
function localOperations(): Operation[] {
  compiled ??= loadContract(readLocalSpec()).operations;
  return compiled;
}

export async function runVerification(options: VerifyOptions): Promise<Findings> {
  const findings = new Findings();
  const baseUrl = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const client = new PoliteClient(findings, options.maxRequests, options.wait);
  const now = options.now ?? Date.now;
  const exchanger = new Exchanger(baseUrl, client, findings, options.apiKey, now);
  const operations = localOperations();
  await comparePublished(client, findings, options.baseUrl);
  const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  const authorization = `Bearer ${options.apiKey}`;
  const steps: StepContext = { exchanger, findings, operations: byId, authorization };
  const runId = `${now().toString(36)}-${options.seed.toString(36)}`;
  const prefix = `${createdPetPrefix} ${runId}`;

  const created = options.readOnly
    ? undefined
    : await idempotentReplay(steps, (text) => `${prefix} ${text}`, `${createdPetPrefix}-${runId}`);
  // A key without the scope to write (a read-only key) makes the rest of the run read-only: the 403 was checked.
  const readOnly = options.readOnly || exchanger.refusedForScope('createPet');
  if (readOnly && !options.readOnly)
    findings.notes.push('the rest of the run is read-only: the key cannot create pets');
  const pets = await walkPages(steps);
  const known = created ?? pets[0];
  if (known === undefined) findings.notes.push('no pet to fetch: the 200 and 304 of getPet were not checked');
  else await etagRoundTrip(steps, 'getPet', { pathParams: { petId: String(known.id) } });
  await etagRoundTrip(steps, 'listPets', { query: [['limit', '3']] });

  const context: GeneratorContext = { key: options.apiKey, bodyLimit: httpLimits.bodyLimitBytes };
  const maxNameLength = Number(
    (byId.get('createPet')?.body?.schema['properties'] as Record<string, Record<string, unknown>> | undefined)?.[
      'name'
    ]?.['maxLength'] ?? 100,
  );
  // Without a key, every secured operation answers 401 before it reads or writes anything.
  for (const operation of operations.filter((candidate) => candidate.secured)) {
    const [sample] = fc.sample(arbitraries(operation, context).valid, { numRuns: 1, seed: options.seed });
    if (sample === undefined) continue;
    const { authorization: _dropped, ...headers } = sample.request.headers;
    const keyless = { ...sample.request, intent: 'no API key', headers };
    const request = operation.operationId === 'createPet' ? prefixed(keyless, prefix, maxNameLength) : keyless;
    const answer = await exchanger.send(operation, request, { expect: [401] });
    if (operation.operationId === 'createPet' && answer?.status === 201) findings.created += 1;
  }

  const runs = Math.max(1, Math.ceil(options.maxRequests / Math.max(1, operations.length) / 3));
  let generatedCreates = 0;
  const reserved = Math.floor(options.maxRequests * sequencesShare);
  for (const { operation, item } of generatedCases(operations, context, readOnly, runs, options.seed)) {
    if (client.remaining <= reserved) break;
    let request = item.request;
    const creates = operation.operationId === 'createPet' && item.request.intent === 'valid';
    if (creates) {
      if (generatedCreates >= maxGeneratedCreates) continue;
      request = prefixed(request, prefix, maxNameLength);
    }
    const answer = await exchanger.send(operation, request, { expect: item.expect });
    if (creates) generatedCreates += 1;
    if (operation.operationId === 'createPet' && answer?.status === 201) findings.created += 1;
  }
  const retired = new Set(
    operations
      .filter((operation) => operation.deprecation?.sunset && now() >= operation.deprecation.sunset.getTime())
      .map((operation) => operation.operationId),
  );
  const ran = await runModelSequences({
    ...steps,
    basePath: baseUrl.pathname.replace(/\/$/, ''),
    context,
    readOnly,
    retired,
    namePrefix: prefix,
    keyPrefix: `${createdPetPrefix}-${runId}-model`,
    seed: options.seed,
    budget: client.remaining,
  });
  findings.notes.push(`stateful: ${ran.sequences} sequences of ${ran.commands} commands against a model of the store`);
  if (client.remaining <= 0) findings.notes.push(`stopped at --max-requests ${options.maxRequests}`);
  return findings;
}
