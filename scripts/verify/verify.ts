import { publishedSpec } from '../../src/openapi/published.js';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse } from 'yaml';
import { invalidCases, validCases, type Case, type GeneratorContext } from '../../lib/conformance/requests.js';
import { isSafe, labelled, resourceKinds, retiredAt } from '../../lib/conformance/resources.js';
import { loadContract, readLocalSpec, type Operation } from '../../lib/conformance/spec.js';
import type { Json, JsonObject } from '../../lib/openapi/dereference.js';
import { httpLimits } from '../../src/http/limits.js';
import { specPath } from '../../src/openapi/files.js';
import { Exchanger } from './exchange.js';
import { Findings } from './findings.js';
import { PoliteClient } from './http.js';
import { specDifferences } from './specDiff.js';
import { runModelSequences } from './sequences.js';
import {
  OwnResources,
  conditionalOperations,
  etagRoundTrip,
  firstWrites,
  makeOnce,
  pagedOperations,
  walkPages,
  type Resource,
  type StepContext,
} from './steps.js';

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
  /** Tests only: the spec to verify against, instead of this checkout's openapi.yaml. */
  spec?: JsonObject;
}

/** The prefix of everything a write-mode run writes, so that staging's data says where it came from. */
export const createdPetPrefix = 'contract-verify';
// Staging keeps what a run creates: a bound on it, whatever the budget.
const maxGeneratedCreates = 25;
// The share of --max-requests kept for the stateful sequences, which run last.
const sequencesShare = 0.25;

/** The published contract (GET <base>/openapi.json) against openapi.yaml here: a difference is the first finding. */
async function comparePublished(
  client: PoliteClient,
  findings: Findings,
  base: string,
  spec: JsonObject | undefined,
): Promise<void> {
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
  // What a deployment publishes leaves out the internal servers (src/openapi/published.ts).
  const local = publishedSpec((spec ?? parse(readFileSync(specPath, 'utf8'), { intAsBigInt: true })) as object) as Json;
  const differences = specDifferences(local, published);
  if (differences.length > 0)
    findings.fail({
      subject,
      check: 'published contract',
      message: `the deployment publishes another contract than this checkout's openapi.yaml:\n  ${differences.join('\n  ')}`,
      curl,
    });
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

/**
 * The generated requests of every operation, interleaved so that a small
 * budget still reaches each one. Read-only: of an operation with an unsafe
 * method, only requests the contract refuses before anything is written.
 */
function generatedCases(
  operations: Operation[],
  context: GeneratorContext,
  readOnly: boolean,
  runs: number,
  seed: number,
) {
  const streams = operations.map((operation) => {
    const writes = !isSafe(operation);
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

/** openapi.yaml here (or a test's spec), its schemas compiled once per process (close to a second of ajv). */
function localOperations(spec?: JsonObject): Operation[] {
  if (spec !== undefined) return loadContract(spec).operations;
  compiled ??= loadContract(readLocalSpec()).operations;
  return compiled;
}

export async function runVerification(options: VerifyOptions): Promise<Findings> {
  const findings = new Findings();
  const baseUrl = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const client = new PoliteClient(findings, options.maxRequests, options.wait);
  const now = options.now ?? Date.now;
  const operations = localOperations(options.spec);
  const kinds = resourceKinds(operations);
  const own = new OwnResources(kinds);
  const exchanger = new Exchanger(baseUrl, client, findings, options.apiKey, now, own);
  await comparePublished(client, findings, options.baseUrl, options.spec);
  const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  const authorization = `Bearer ${options.apiKey}`;
  const steps: StepContext = { exchanger, findings, operations: byId, authorization };
  const runId = `${now().toString(36)}-${options.seed.toString(36)}`;
  const prefix = `${createdPetPrefix} ${runId}`;
  const makers = kinds.flatMap((kind) => kind.makers);

  if (!options.readOnly)
    for (const [index, { operation, status }] of firstWrites(own, operations).entries()) {
      // What it makes, the exchanger records as the run's own.
      const key = `${createdPetPrefix}-${runId}-${index}`;
      await makeOnce(steps, own, operation, status, { prefix, key, seed: options.seed });
    }
  // A key without the scope to write (a read-only key) makes the rest of the run read-only: the 403 was checked.
  const refused = makers.filter((maker) => exchanger.refusedForScope(maker.operation.operationId));
  const readOnly = options.readOnly || refused.length > 0;
  if (readOnly && !options.readOnly)
    findings.notes.push(
      `the rest of the run is read-only: the key cannot ${refused.map((maker) => maker.operation.operationId).join(', ')}`,
    );
  const walked = new Map<string, Resource[]>();
  for (const operation of pagedOperations(operations)) {
    const kind = kinds.find((candidate) => candidate.makers.some((maker) => maker.operation.path === operation.path));
    walked.set(operation.path, await walkPages(steps, operation, kind?.idPointer));
  }
  await revalidateEach(steps, operations, own, walked);

  const context: GeneratorContext = { key: options.apiKey, bodyLimit: httpLimits.bodyLimitBytes };
  // Without a key, every secured operation answers 401 before it reads or writes anything.
  for (const operation of operations.filter((candidate) => candidate.secured)) {
    const [sample] = fc.sample(arbitraries(operation, context).valid, { numRuns: 1, seed: options.seed });
    if (sample === undefined) continue;
    const { authorization: _dropped, ...headers } = sample.request.headers;
    const aimed = own.aim(operation, { ...sample.request, intent: 'no API key', headers });
    if (aimed === undefined) continue;
    const request = isSafe(operation) ? aimed : labelled(operation, aimed, prefix);
    const answer = await exchanger.send(operation, request, { expect: [401] });
    const maker = own.makerOf(operation);
    if (maker && answer?.status === maker.status) findings.made(operation.operationId);
  }

  const runs = Math.max(1, Math.ceil(options.maxRequests / Math.max(1, operations.length) / 3));
  let generatedCreates = 0;
  const reserved = Math.floor(options.maxRequests * sequencesShare);
  const unaimed = new Set<string>();
  for (const { operation, item } of generatedCases(operations, context, readOnly, runs, options.seed)) {
    if (client.remaining <= reserved) break;
    const aimed = own.aim(operation, item.request);
    if (aimed === undefined) {
      unaimed.add(operation.operationId);
      continue;
    }
    const maker = own.makerOf(operation);
    const creates = maker !== undefined && item.request.intent === 'valid';
    if (creates && generatedCreates >= maxGeneratedCreates) continue;
    const request = isSafe(operation) || item.request.intent !== 'valid' ? aimed : labelled(operation, aimed, prefix);
    const answer = await exchanger.send(operation, request, { expect: item.expect });
    if (creates) generatedCreates += 1;
    if (maker && answer?.status === maker.status) findings.made(operation.operationId);
  }
  if (unaimed.size > 0)
    findings.notes.push(
      `not sent: requests of ${[...unaimed].sort().join(', ')} that would name a resource this run did not make (unsafe method)`,
    );
  const ran = await runModelSequences({
    ...steps,
    basePath: baseUrl.pathname.replace(/\/$/, ''),
    readOnly,
    retired: retiredAt(operations, now()),
    namePrefix: prefix,
    keyPrefix: `${createdPetPrefix}-${runId}-model`,
    seed: options.seed,
    budget: client.remaining,
  });
  findings.notes.push(`stateful: ${ran.sequences} sequences of ${ran.commands} commands against a model of the store`);
  if (client.remaining <= 0) findings.notes.push(`stopped at --max-requests ${options.maxRequests}`);
  return findings;
}

/**
 * The ETag round trip of every operation that declares one: a collection
 * read with a small page, an item read on a resource the run made or walked
 * (safe methods may name any).
 */
async function revalidateEach(
  steps: StepContext,
  operations: Operation[],
  own: OwnResources,
  walked: Map<string, Resource[]>,
): Promise<void> {
  for (const operation of conditionalOperations(operations)) {
    const path = operation.parameters.filter((parameter) => parameter.in === 'path');
    if (path.length === 0) {
      const limited = operation.parameters.some((parameter) => parameter.in === 'query' && parameter.name === 'limit');
      await etagRoundTrip(steps, operation, { query: limited ? [['limit', '3']] : [] });
      continue;
    }
    // A resource its parents alone name is read where the run made one; under other parents it may be absent.
    const made = own.madeAt(operation.path);
    if (made === undefined && own.isSingletonPath(operation.path)) {
      steps.findings.notes.push(`nothing made to read: the 200 and 304 of ${operation.operationId} were not checked`);
      continue;
    }
    const pathParams: Record<string, string> = { ...made };
    for (const parameter of path.filter((declared) => pathParams[declared.name] === undefined)) {
      const id = own.pick(parameter) ?? seenId(own, walked, parameter.name);
      if (id !== undefined) pathParams[parameter.name] = id;
    }
    if (Object.keys(pathParams).length < path.length) {
      steps.findings.notes.push(`no resource to read: the 200 and 304 of ${operation.operationId} were not checked`);
      continue;
    }
    await etagRoundTrip(steps, operation, { pathParams });
  }
}

/** The id of a resource a walk saw, for a safe read of one. */
function seenId(own: OwnResources, walked: Map<string, Resource[]>, parameter: string): string | undefined {
  for (const kind of own.kinds.filter((candidate) => candidate.pathParameters.has(parameter))) {
    for (const maker of kind.makers) {
      const first = walked.get(maker.operation.path)?.[0];
      const id = first === undefined ? undefined : maker.idOf(first, null);
      if (id !== undefined) return id;
    }
  }
  return undefined;
}
