import type { TestRequest } from '../../lib/conformance/checks.js';
import type { Operation } from '../../lib/conformance/spec.js';
import type { Answer, Exchanger } from './exchange.js';
import type { Findings } from './findings.js';

/**
 * The checks that need more than one request: paging by Link rel="next",
 * the ETag -> 304 round trip, and (write mode) the Idempotency-Key replay.
 * Each request is checked on its own by the exchanger as well.
 */

// Small pages, so that a walk crosses several with few pets.
const pageSize = 5;
// A walk stops here on a large catalogue; what it saw by then is checked.
const maxPages = 10;

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

export interface StepContext {
  exchanger: Exchanger;
  findings: Findings;
  operations: Map<string, Operation>;
  authorization: string;
}

function request(operationId: string, intent: string, parts: Partial<TestRequest>, authorization: string): TestRequest {
  return { operationId, intent, pathParams: {}, query: [], headers: { authorization }, ...parts };
}

function nextLink(answer: Answer): string | undefined {
  return /<([^>]+)>\s*;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1];
}

/** Pages of listPets from the first by Link rel="next": each pet once, ids rising, no page over the limit. */
export async function walkPages(context: StepContext): Promise<Pet[]> {
  const listPets = context.operations.get('listPets');
  if (listPets === undefined) return [];
  const first = request(
    'listPets',
    `walk, limit ${pageSize}`,
    { query: [['limit', String(pageSize)]] },
    context.authorization,
  );
  const seen: Pet[] = [];
  let url: string | undefined = context.exchanger.urlOf(listPets, first);
  for (let page = 0; url !== undefined && page < maxPages; page += 1) {
    const answer = await context.exchanger.send(listPets, first, { url, expect: [200] });
    if (answer?.status !== 200 || !Array.isArray(answer.json)) return seen;
    const pets = answer.json as Pet[];
    const last = seen.at(-1)?.id ?? 0;
    if (pets.length > pageSize)
      context.exchanger.fail(listPets, answer, 'paging', `a page of ${pets.length} pets for limit ${pageSize}`);
    if (pets.some((pet, index) => pet.id <= (index === 0 ? last : (pets[index - 1]?.id ?? 0))))
      context.exchanger.fail(
        listPets,
        answer,
        'paging',
        `ids not rising across pages after ${last}: ${pets.map((pet) => pet.id).join(', ')}`,
      );
    seen.push(...pets);
    const next = nextLink(answer);
    if (next !== undefined && pets.length < pageSize)
      context.exchanger.fail(listPets, answer, 'paging', `a short page (${pets.length}) still links to a next page`);
    url = next === undefined ? undefined : context.exchanger.resolve(next);
  }
  if (url !== undefined) context.findings.notes.push(`paging walk stopped after ${maxPages} pages of ${pageSize}`);
  return seen;
}

/** The same GET again with If-None-Match: 304, no body, the same ETag. */
export async function etagRoundTrip(
  context: StepContext,
  operationId: string,
  parts: Partial<TestRequest>,
): Promise<void> {
  const operation = context.operations.get(operationId);
  if (operation === undefined || !operation.responses.has('304')) return;
  const fresh = request(operationId, 'ETag round trip', parts, context.authorization);
  const first = await context.exchanger.send(operation, fresh, { expect: [200] });
  if (first?.status !== 200) return;
  const etag = first.headers.get('etag');
  if (etag === null) {
    context.exchanger.fail(operation, first, 'ETag', `a 200 of ${operationId} without the ETag its 304 needs`);
    return;
  }
  const again = { ...fresh, headers: { ...fresh.headers, 'if-none-match': etag } };
  const second = await context.exchanger.send(operation, again, { expect: [304] });
  if (second?.status === 304 && second.headers.get('etag') !== etag)
    context.exchanger.fail(
      operation,
      second,
      'ETag',
      `304 carries ETag ${second.headers.get('etag')}, the 200 had ${etag}`,
    );
}

/**
 * createPet with an Idempotency-Key, sent twice with the same body (the
 * second is the stored answer: Idempotent-Replayed, the same pet) and once
 * with another body (422). Returns the pet created.
 */
export async function idempotentReplay(
  context: StepContext,
  name: (text: string) => string,
  key: string,
): Promise<Pet | undefined> {
  const createPet = context.operations.get('createPet');
  if (createPet === undefined) return undefined;
  const body = JSON.stringify({ name: name('idempotent'), categoryId: 1 });
  const headers = { authorization: context.authorization, 'content-type': 'application/json', 'idempotency-key': key };
  const create = request('createPet', 'Idempotency-Key, first', { headers, body }, context.authorization);
  const first = await context.exchanger.send(createPet, create, { expect: [201] });
  if (first?.status !== 201) return undefined;
  context.findings.created += 1;
  const replay = await context.exchanger.send(
    createPet,
    { ...create, intent: 'Idempotency-Key, replay' },
    { expect: [201] },
  );
  if (replay?.status === 201) {
    if (replay.headers.get('idempotent-replayed') !== 'true')
      context.exchanger.fail(createPet, replay, 'Idempotency-Key replay', 'the replay lacks Idempotent-Replayed: true');
    if (replay.text !== first.text || replay.headers.get('location') !== first.headers.get('location'))
      context.exchanger.fail(
        createPet,
        replay,
        'Idempotency-Key replay',
        `the replay answered ${replay.text}, the first ${first.text}`,
      );
    if (replay.headers.get('idempotent-replayed') !== 'true') context.findings.created += 1;
  }
  const other = JSON.stringify({ name: name('idempotent, other body'), categoryId: 1 });
  const reused = await context.exchanger.send(
    createPet,
    { ...create, intent: 'Idempotency-Key, another body', body: other },
    { expect: [422] },
  );
  if (reused?.status === 201) context.findings.created += 1;
  return first.json as Pet;
}
