import fc from 'fast-check';
import { bytesWithin, valid } from '../../lib/conformance/arbitraries.js';
import { sameBody, type TestRequest } from '../../lib/conformance/checks.js';
import {
  atPointer,
  bodyReferences,
  idempotencyHeader,
  isSafe,
  labelled,
  referencedKind,
  type Maker,
} from '../../lib/conformance/resources.js';
import type { Operation } from '../../lib/conformance/spec.js';
import { httpLimits } from '../../src/http/limits.js';
import type { Answer } from './answer.js';
import type { Exchanger } from './exchange.js';
import type { Findings } from './findings.js';

import type { OwnResources } from './ownResources.js';

export { OwnResources } from './ownResources.js';

/**
 * The checks that need more than one request, each chosen by what the spec
 * declares: paging by Link rel="next" (a 200 that declares `Link`), the
 * ETag -> 304 round trip (a success with `ETag` and a declared 304), and in
 * write mode the Idempotency-Key replay (every operation that declares the header).
 * Each request is checked on its own by the exchanger as well.
 */

// Small pages, so that a walk crosses several with few resources.
const pageSize = 5;
// A walk stops here on a large catalogue; what it saw by then is checked.
const maxPages = 10;

export type Resource = Record<string, unknown>;

export interface StepContext {
  exchanger: Exchanger;
  findings: Findings;
  operations: Map<string, Operation>;
  authorization: string;
}

function request(
  operation: Operation,
  intent: string,
  parts: Partial<TestRequest>,
  authorization: string,
): TestRequest {
  return {
    operationId: operation.operationId,
    intent,
    pathParams: {},
    query: [],
    headers: { authorization },
    ...parts,
  };
}

function nextLink(answer: Answer): string | undefined {
  return /<([^>]+)>\s*;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1];
}

const declaresHeader = (operation: Operation, status: string, name: string) =>
  operation.responses.get(status)?.headers.some((header) => header.name === name) === true;
const hasQuery = (operation: Operation, name: string) =>
  operation.parameters.some((parameter) => parameter.in === 'query' && parameter.name === name);

/** The operations whose pages are walked: safe, on a collection, a 200 that declares Link. */
export const pagedOperations = (operations: Iterable<Operation>): Operation[] =>
  [...operations].filter(
    (operation) =>
      isSafe(operation) &&
      !operation.parameters.some((parameter) => parameter.in === 'path') &&
      declaresHeader(operation, '200', 'link'),
  );

/**
 * Pages of a collection from the first by Link rel="next": each resource
 * once, ids rising (by the id a link names), no page over the limit.
 */
export async function walkPages(context: StepContext, operation: Operation, idPointer?: string): Promise<Resource[]> {
  const limited = hasQuery(operation, 'limit');
  const first = request(
    operation,
    `walk${limited ? `, limit ${pageSize}` : ''}`,
    { query: limited ? [['limit', String(pageSize)]] : [] },
    context.authorization,
  );
  const idOf = (resource: Resource) => (idPointer === undefined ? undefined : Number(atPointer(resource, idPointer)));
  const seen: Resource[] = [];
  let url: string | undefined = context.exchanger.urlOf(operation, first);
  for (let page = 0; url !== undefined && page < maxPages; page += 1) {
    const answer = await context.exchanger.send(operation, first, { url, expect: [200] });
    if (answer?.status !== 200 || !Array.isArray(answer.json)) return seen;
    const items = answer.json as Resource[];
    if (limited && items.length > pageSize)
      context.exchanger.fail(operation, answer, 'paging', `a page of ${items.length} for limit ${pageSize}`);
    const ids = [...seen.slice(-1), ...items].map(idOf);
    if (ids.some((id, index) => index > 0 && id !== undefined && ids[index - 1]! >= id))
      context.exchanger.fail(
        operation,
        answer,
        'paging',
        `ids not rising across pages after ${ids[0]}: ${ids.slice(seen.length === 0 ? 0 : 1).join(', ')}`,
      );
    seen.push(...items);
    const next = nextLink(answer);
    if (limited && next !== undefined && items.length < pageSize)
      context.exchanger.fail(operation, answer, 'paging', `a short page (${items.length}) still links to a next page`);
    url = next === undefined ? undefined : context.exchanger.resolve(next);
  }
  if (url !== undefined)
    context.findings.notes.push(`paging walk of ${operation.operationId} stopped after ${maxPages} pages`);
  return seen;
}

/** The operations whose answers are revalidated: safe, a 200 with ETag, and a declared 304. */
export const conditionalOperations = (operations: Iterable<Operation>): Operation[] =>
  [...operations].filter(
    (operation) => isSafe(operation) && operation.responses.has('304') && declaresHeader(operation, '200', 'etag'),
  );

/** The same GET again with If-None-Match: 304, no body, the same ETag. */
export async function etagRoundTrip(
  context: StepContext,
  operation: Operation,
  parts: Partial<TestRequest>,
): Promise<void> {
  const fresh = request(operation, 'ETag round trip', parts, context.authorization);
  const first = await context.exchanger.send(operation, fresh, { expect: [200] });
  if (first?.status !== 200) return;
  const etag = first.headers.get('etag');
  if (etag === null) {
    context.exchanger.fail(
      operation,
      first,
      'ETag',
      `a 200 of ${operation.operationId} without the ETag its 304 needs`,
    );
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

type Body = string | Uint8Array;

const differ = (first: Body, second: Body) =>
  typeof first === 'string' || typeof second === 'string' ? first !== second : Buffer.compare(first, second) !== 0;

/**
 * Two different valid bodies of an operation: JSON text labelled with the run's prefix, or bytes (which have
 * no label) within the operation's limit.
 */
function twoBodies(operation: Operation, seed: number, prefix: string): [Body, Body] | undefined {
  const body = operation.body;
  if (body === undefined) return undefined;
  const label = (value: unknown) =>
    String(labelled(operation, request(operation, '', { body: JSON.stringify(value) }, ''), prefix).body);
  const bodies: Body[] =
    body.kind === 'bytes'
      ? fc.sample(bytesWithin(body.limitBytes ?? httpLimits.bodyLimitBytes), { numRuns: 20, seed })
      : fc.sample(valid(body.schema), { numRuns: 20, seed }).map(label);
  const other = bodies.find((drawn) => differ(drawn, bodies[0]!));
  return other === undefined ? undefined : [bodies[0]!, other];
}

/**
 * The run's first request of an unsafe operation that makes something (a
 * maker, or any that declares an `Idempotency-Key`), its path naming
 * resources the run made. With the header parameter, sent twice with the
 * same key and body (the second is the stored answer: Idempotent-Replayed
 * when declared, the same answer) and once with another body (422, when
 * declared). Returns the first answer.
 */
export async function makeOnce(
  context: StepContext,
  own: OwnResources,
  operation: Operation,
  status: number,
  options: { prefix: string; key: string; seed: number },
): Promise<Answer | undefined> {
  const bodies = twoBodies(operation, options.seed, options.prefix);
  const maker = own.makerOf(operation);
  // A PUT makes what its path names, with a body or (PUT /owners/{ownerId}/adoptions/{petId}) none.
  if (maker?.clientId !== undefined || maker?.singleton) return putOnce(context, own, maker, bodies?.[0], options.seed);
  if (bodies === undefined) return undefined;
  // An id of another kind in the body (POST /visits {petId}) names one the run made.
  const [body, otherBody] = bodies.map((drawn) => (typeof drawn === 'string' ? own.aimBody(operation, drawn) : drawn));
  if (body === undefined || otherBody === undefined) {
    context.findings.notes.push(`${operation.operationId} not sent: the run made nothing its body names`);
    return undefined;
  }
  const pathParams: Record<string, string> = {};
  for (const parameter of operation.parameters.filter((declared) => declared.in === 'path')) {
    const id = own.pick(parameter, operation.path);
    if (id === undefined) {
      context.findings.notes.push(
        `${operation.operationId} not sent: the run made nothing its ${parameter.name} names`,
      );
      return undefined;
    }
    pathParams[parameter.name] = id;
  }
  const keyHeader = idempotencyHeader(operation);
  const headers: Record<string, string> = {
    authorization: context.authorization,
    'content-type': operation.body!.mediaType,
    ...(keyHeader ? { [keyHeader.name.toLowerCase()]: options.key } : {}),
  };
  const intent = keyHeader ? 'Idempotency-Key, first' : 'a resource of the run';
  const create = request(operation, intent, { pathParams, headers, body }, context.authorization);
  const first = await context.exchanger.send(operation, create, { expect: [status] });
  if (first?.status !== status) return undefined;
  context.findings.made(operation.operationId);
  if (keyHeader === undefined) return first;
  const replay = await context.exchanger.send(
    operation,
    { ...create, intent: 'Idempotency-Key, replay' },
    { expect: [status] },
  );
  if (replay?.status === status) {
    const replayed = replay.headers.get('idempotent-replayed');
    if (declaresHeader(operation, String(status), 'idempotent-replayed') && replayed !== 'true')
      context.exchanger.fail(operation, replay, 'Idempotency-Key replay', 'the replay lacks Idempotent-Replayed: true');
    if (!sameBody(replay, first) || replay.headers.get('location') !== first.headers.get('location'))
      context.exchanger.fail(
        operation,
        replay,
        'Idempotency-Key replay',
        `the replay answered ${replay.text}, the first ${first.text}`,
      );
    if (replayed !== 'true') context.findings.made(operation.operationId);
  }
  if (operation.responses.has('422')) {
    const reused = await context.exchanger.send(
      operation,
      { ...create, intent: 'Idempotency-Key, another body', body: otherBody },
      { expect: [422] },
    );
    if (reused?.status === status) context.findings.made(operation.operationId);
  }
  return first;
}

// Ids drawn for a PUT that makes, tried in turn while each is taken (412): another run may have drawn it.
const drawnIds = 5;

/**
 * The run's first PUT that makes a resource at the id the caller names (RFC 9110 9.3.4): the id drawn from
 * the parameter's schema (or, when it names a resource of another kind, one the run made), its parents the
 * run's, and `If-None-Match: *` where declared, so that it creates and never replaces. Without that header
 * the drawn id is sent as it stands (the run's own from then on). A resource its parents alone name (a
 * singleton) is put under parents the run made: nothing else can have made it there.
 */
async function putOnce(
  context: StepContext,
  own: OwnResources,
  maker: Maker,
  body: Body | undefined,
  seed: number,
): Promise<Answer | undefined> {
  const operation = maker.operation;
  const clientId = maker.clientId;
  const parents: Record<string, string> = {};
  for (const name of maker.parents) {
    const parameter = operation.parameters.find((declared) => declared.in === 'path' && declared.name === name)!;
    const id = own.pick(parameter, operation.path);
    if (id === undefined) {
      context.findings.notes.push(`${operation.operationId} not sent: the run made nothing its ${name} names`);
      return undefined;
    }
    parents[name] = id;
  }
  const referenced = clientId && referencedKind(own.kinds, maker) !== undefined ? own.pick(clientId) : undefined;
  const candidates =
    clientId === undefined
      ? [undefined]
      : referenced !== undefined
        ? [referenced]
        : fc.sample(valid(clientId.schema), { numRuns: drawnIds, seed: (seed + Date.now()) | 0 }).map(String);
  const createOnly = operation.parameters.some(
    (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'if-none-match',
  );
  const taken = createOnly && operation.responses.has('412') ? [412] : [];
  for (const id of candidates) {
    const headers: Record<string, string> = {
      authorization: context.authorization,
      ...(operation.body ? { 'content-type': operation.body.mediaType } : {}),
      ...(createOnly ? { 'if-none-match': '*' } : {}),
    };
    const pathParams = clientId === undefined || id === undefined ? parents : { ...parents, [clientId.name]: id };
    const create = request(
      operation,
      clientId === undefined
        ? 'a resource of the run, under its own parents'
        : 'a resource of the run, at an id it drew',
      { pathParams, headers, ...(body === undefined ? {} : { body }) },
      context.authorization,
    );
    if (!createOnly && id !== undefined) own.claim(maker, id);
    const answer = await context.exchanger.send(operation, create, { expect: [maker.status, ...taken] });
    if (answer?.status !== 412 || taken.length === 0) {
      if (answer?.status === maker.status) context.findings.made(operation.operationId);
      return answer;
    }
  }
  context.findings.notes.push(`${operation.operationId}: every id drawn was taken (412)`);
  return undefined;
}

/**
 * What a write-mode run makes first, in an order that makes parents before
 * what is made under them: the makers, then every other unsafe operation
 * that declares an `Idempotency-Key` (its key replayed), with the success
 * status each is sent for.
 */
export function firstWrites(
  own: OwnResources,
  operations: Operation[],
): Array<{ operation: Operation; status: number }> {
  const makers = own.kinds.flatMap((kind) => kind.makers);
  // Parents first, and what a PUT's id refers to (a pet, for its adoption) before the PUT.
  const rank = (maker: Maker) =>
    maker.parents.length * 2 +
    (referencedKind(own.kinds, maker) || bodyReferences(own.kinds, maker.operation).length > 0 ? 1 : 0);
  const byDepth = [...makers].sort((a, b) => rank(a) - rank(b));
  const keyed = operations.filter(
    (operation) =>
      !isSafe(operation) &&
      operation.body !== undefined &&
      idempotencyHeader(operation) !== undefined &&
      !makers.some((maker) => maker.operation === operation),
  );
  return [
    ...byDepth.map((maker) => ({ operation: maker.operation, status: maker.status })),
    ...keyed.flatMap((operation) => {
      const success = [...operation.responses.keys()].find((status) => status.startsWith('2'));
      return success === undefined ? [] : [{ operation, status: Number(success) }];
    }),
  ];
}
