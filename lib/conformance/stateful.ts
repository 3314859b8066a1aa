import fc from 'fast-check';
import { valid } from './arbitraries.js';
import { sameBody, type TestRequest } from './checks.js';
import { bodyValues, onTheWire } from './requests.js';
import { httpLimits } from '../../src/http/limits.js';
import {
  atPointer,
  bodyReferences,
  idempotencyHeader,
  isSafe,
  createsAtPath,
  kindAt,
  keyOfParents,
  referencedKind,
  labelled,
  resourceKinds,
  type Maker,
  type ResourceKind,
} from './resources.js';
import { accepts, type Operation, type Parameter, type Schema } from './spec.js';

/**
 * Stateful sequences driven by a model of the store, derived from the spec:
 * its commands are the operations, grouped by the kind of resource they
 * touch (lib/conformance/resources.ts: what a 201's links or Location say
 * its maker made). Each answer is compared with what the model says it must
 * be; every answer is also checked against the schema by the transport (the
 * conformance client, or npm run verify's exchanger).
 *
 * - A maker (POST to the collection, under a resource this sequence made
 *   when its path names one) adds what it answers.
 * - Every unsafe operation that declares an `Idempotency-Key` header
 *   parameter is sent with a key now and then, and replayed with the same
 *   key (the same answer) and with another body (422, when declared).
 * - An operation on a path under a resource's exact item path
 *   (`/pets/{petId}/notes` under `/pets/{petId}`) acts on another resource:
 *   it answers success while the parent exists, its declared 404 once it
 *   is gone, and leaves the parent as it was. Unsafe ones name only a
 *   parent this sequence made.
 * - A safe operation whose path names one resource answers it (a known id),
 *   or its declared 404 (an id removed in this sequence, or none can have);
 *   with an ETag on its success and a declared 304, the conditional GET.
 * - A safe operation on the collection with an array query parameter that a
 *   link fills with the id: the lookup by id (and its conditional GET);
 *   with a `Link` header on its 200: the walk by rel="next". Enum query
 *   parameters named as a property of the resource filter by equality,
 *   `limit` and `cursor` cut pages.
 * - An unsafe operation whose path names one resource is sent only to one
 *   this sequence made: a 2xx to DELETE removes it, a 2xx answering the
 *   resource's schema (PUT, PATCH) replaces the model's copy with the
 *   answer, once the fields sent are found in it; a 2xx with no body to a
 *   body of bytes (a photo put: 201, 204) makes those bytes the model's
 *   copy, which a read answering bytes must answer byte for byte; any other
 *   2xx leaves its state unknown, and it is compared no more.
 *
 * The model knows the resources this sequence made or saw. When the store
 * is the sequence's own (a test's fresh table: `exclusive`), it is exactly
 * those and every listing is compared whole; against a deployment, listings
 * are compared on the resources the model knows.
 */

export type Resource = Record<string, unknown>;

/** An answer as the transport saw it; its contract problems (schema, headers) are the transport's to report. */
export interface Observed {
  status: number;
  headers: Headers;
  text: string;
  /** The body byte for byte, when the transport kept it (a body in a bytes media type need be no UTF-8). */
  bytes?: Uint8Array;
  json?: unknown;
  problems: string[];
}

export interface StatefulTransport {
  /** Sends the request (to `url`, a Link target, when given); undefined when the transport's budget is spent. */
  send(request: TestRequest, url?: string): Promise<Observed | undefined>;
}

export interface StatefulOptions {
  /** The spec's operations (lib/conformance/spec.ts). */
  operations: Operation[];
  authorization: string;
  /** The API's base path (/v1), which Location and Link targets start with. */
  basePath: string;
  /** The store holds exactly what the sequence created (a fresh table). */
  exclusive: boolean;
  /** No request with an unsafe method (npm run verify --read-only). */
  readOnly: boolean;
  /** Operations not to call (past their sunset). */
  retired: ReadonlySet<string>;
  /** Makes each Idempotency-Key unique to its run (keys live 24 hours, runs share them otherwise). */
  keyPrefix: string;
  /** Texts written on a deployment start with this, so that its data says where it came from. */
  namePrefix?: string;
  /** The most pages a walk reads on a store that is not the sequence's own. */
  maxPages?: number;
}

/** A model answer that differs from the service's. */
export class ModelMismatch extends Error {}

interface KindState {
  /** Resources that exist, by id: made or seen by this sequence. */
  live: Map<string, Resource>;
  /** Ids this sequence made: the only ones an unsafe request may name. */
  made: Set<string>;
  /** Ids this sequence made and removed since: a read of one is the declared 404. */
  removed: Set<string>;
  /** Ids an unsafe answer left in an unknown state (no representation in it): compared no more. */
  unsettled: Set<string>;
  /** The parents' path parameters of each id made under another resource. */
  parents: Map<string, Record<string, string>>;
  /** The bytes last put, by id, of a resource whose body is bytes (a photo): what a read of it answers. */
  bytes: Map<string, Uint8Array>;
  /**
   * The id a key stands for, when they differ: a resource the caller names under a parent (the adoption of
   * pet 5 by owner "a") is keyed by its whole path, since another parent may have one of the same id.
   */
  idOfKey: Map<string, string>;
}

interface Model {
  kinds: Map<number, KindState>;
  /** Idempotency-Keys sent, per operation, with the path and body sent and the answer. */
  keys: Array<{
    operationId: string;
    key: string;
    pathParams: Record<string, string>;
    body: string;
    status: number;
    answer: unknown;
  }>;
  /** Cursors the service issued, per operation, with the id each page ended at. */
  cursors: Map<string, Array<{ cursor: string; afterId: string }>>;
}

const stateOf = (model: Model, kind: number): KindState => {
  let state = model.kinds.get(kind);
  if (state === undefined) {
    state = {
      live: new Map(),
      made: new Set(),
      removed: new Set(),
      unsettled: new Set(),
      parents: new Map(),
      bytes: new Map(),
      idOfKey: new Map(),
    };
    model.kinds.set(kind, state);
  }
  return state;
};

/**
 * Ids no resource of this service can have (it assigns 1 to 2^53 - 1), each
 * used only where the parameter's schema takes it: a read of one is a 404
 * whatever the store holds. Ids removed in the sequence are the other kind.
 */
const unassignedIds = ['0', '-7', '9007199254740993', '9223372036854775807'];

type Command = fc.AsyncCommand<Model, StatefulTransport>;

/** How a Create names a resource the caller names: a drawn id, or (reuse) one the model knows. */
/** The If-Match a change sends: none, a tag no representation has, or the current one. */
type Precondition = 'none' | 'stale' | 'current';

interface ClientName {
  drawn: string;
  reuse: number | undefined;
  createOnly: boolean;
  /** The id of one this kind has under another parent, sent under a parent of the sequence's (a 409, if declared). */
  conflict?: boolean;
  /** A singleton put under a parent the sequence removed: the declared 404. */
  orphan?: boolean;
}

function expectStatus(what: string, answer: Observed | undefined, statuses: number[]): answer is Observed {
  if (answer === undefined) return false;
  if (answer.problems.length > 0)
    throw new ModelMismatch(`${what}: the answer breaks the contract: ${answer.problems.join('; ')}`);
  if (!statuses.includes(answer.status))
    throw new ModelMismatch(
      `${what}: expected ${statuses.join(' or ')}, got ${answer.status} ${answer.text.slice(0, 300)}`,
    );
  return true;
}

/** The JSON body of an answer that must have one. */
function bodyOf(what: string, answer: Observed): unknown {
  if (answer.json === undefined) throw new ModelMismatch(`${what}: no JSON body: ${answer.text.slice(0, 200)}`);
  return answer.json;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The bytes a write sent, when the answer has no body: what the resource now is (a photo's 201 or 204). */
const bytesKept = (sent: TestRequest, answer: Observed): Uint8Array | undefined =>
  sent.body instanceof Uint8Array && answer.text === '' && (answer.bytes?.length ?? 0) === 0 ? sent.body : undefined;

/** The JSON fields a write sent, to find in its answer; none for bytes. */
const fieldsSent = (sent: TestRequest): Resource | undefined =>
  typeof sent.body === 'string' ? (JSON.parse(sent.body) as Resource) : undefined;

function compareBytes(what: string, answer: Observed, expected: Uint8Array): void {
  const got = answer.bytes ?? Buffer.from(answer.text);
  if (Buffer.compare(got, expected) !== 0)
    throw new ModelMismatch(
      `${what}: got ${got.length} bytes, not the ${expected.length} bytes the model says were put`,
    );
}

function compare(what: string, got: unknown, expected: unknown): void {
  if (!same(got, expected))
    throw new ModelMismatch(`${what}: got ${JSON.stringify(got)}, the model says ${JSON.stringify(expected)}`);
}

/** Ids in their order: integers by value, other texts by code unit. */
function compareIds(a: string, b: string): number {
  if (/^-?\d+$/.test(a) && /^-?\d+$/.test(b)) {
    const difference = BigInt(a) - BigInt(b);
    return difference === 0n ? 0 : difference < 0n ? -1 : 1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

const nextLinkOf = (answer: Observed) => /<([^>]+)>\s*;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1];
const cursorOf = (link: string, name: string) => new URLSearchParams(link.split('?')[1] ?? '').get(name) ?? undefined;

const successes = (operation: Operation) =>
  [...operation.responses.keys()].filter((status) => status.startsWith('2')).map(Number);
const declares = (operation: Operation, status: number) => operation.responses.has(String(status));
const declaresHeader = (operation: Operation, status: number, name: string) =>
  operation.responses.get(String(status))?.headers.some((header) => header.name === name) === true;
const declaresHeaderParameter = (operation: Operation, name: string) =>
  operation.parameters.some((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === name);
const pathParameters = (operation: Operation) => operation.parameters.filter((parameter) => parameter.in === 'path');
const queryParameter = (operation: Operation, name: string) =>
  operation.parameters.find((parameter) => parameter.in === 'query' && parameter.name === name);
/** The path parameter that names the resource itself: the path's last segment (`petId` of /pets/{petId}). */
const itemParameter = (operation: Operation) =>
  pathParameters(operation).find((parameter) => operation.path.endsWith(`/{${parameter.name}}`));

/** Whether a value satisfies a parameter's scalar schema (the ids above): bounds, pattern, format, length. */
/**
 * Ids no resource has, for the reads that expect 404: those of unassignedIds the schema takes, else (an id
 * the caller names, a string with a pattern) the longest of a few drawn from it. The model knows what it
 * made, so a drawn id it later makes is read as made.
 */
function missingIds(schema: Schema): string[] {
  const fixed = unassignedIds.filter((id) => takes(schema, id));
  if (fixed.length > 0 || schema['type'] !== 'string') return fixed;
  const drawn = fc.sample(valid(schema), { numRuns: 20, seed: 61 }).map(String);
  return drawn
    .filter((id) => takes(schema, id))
    .sort((a, b) => b.length - a.length)
    .slice(0, 1);
}

function takes(schema: Schema, text: string): boolean {
  if (schema['type'] !== 'integer') return schema['type'] === 'string' && accepts(schema, text);
  const value = BigInt(text);
  const within = (bound: unknown, test: (limit: bigint) => boolean) =>
    typeof bound !== 'number' || test(BigInt(Math.trunc(bound)));
  return within(schema['minimum'], (min) => value >= min) && within(schema['maximum'], (max) => value <= max);
}

/** Filters of a collection read: enum query parameters named as a property of the resource. */
function filtersOf(operation: Operation, kind: ResourceKind): Parameter[] {
  const properties = (kind.schema?.['properties'] ?? {}) as Record<string, Schema>;
  return operation.parameters.filter(
    (parameter) => parameter.in === 'query' && parameter.name in properties && Array.isArray(parameter.schema['enum']),
  );
}

type Filter = { name: string; value: string } | undefined;
const passes = (resource: Resource, filter: Filter) => !filter || resource[filter.name] === filter.value;
const describeFilter = (filter: Filter) => (filter ? `${filter.name}=${filter.value}` : 'no filter');

/** Builds the commands of one option set from the spec's operations. */
export function statefulCommands(options: StatefulOptions): Array<fc.Arbitrary<Command>> {
  const auth = { authorization: options.authorization };
  const kinds = resourceKinds(options.operations);
  const live = (operation: Operation) => !options.retired.has(operation.operationId);
  const request = (operation: Operation, intent: string, parts: Partial<TestRequest>): TestRequest => ({
    operationId: operation.operationId,
    intent,
    pathParams: {},
    query: [],
    headers: auth,
    ...parts,
  });
  const withBody = (operation: Operation, intent: string, body: unknown, parts: Partial<TestRequest> = {}) => {
    // An operation that declares no body is sent none (a PUT that adopts a pet).
    const sent = request(
      operation,
      intent,
      operation.body === undefined
        ? { ...parts, headers: { ...auth, ...parts.headers } }
        : {
            ...parts,
            headers: { ...auth, 'content-type': operation.body.mediaType, ...parts.headers },
            body: onTheWire(operation.body, body),
          },
    );
    return options.namePrefix === undefined ? sent : labelled(operation, sent, options.namePrefix);
  };
  /** Valid bodies of an operation, as every generator draws them: bytes within its limit, else the server's. */
  const bodiesOf = (operation: Operation): fc.Arbitrary<unknown> =>
    operation.body === undefined
      ? fc.constant(undefined)
      : bodyValues(operation.body, { bodyLimit: httpLimits.bodyLimitBytes });
  let keyCounter = 0;
  const commands: Array<fc.Arbitrary<Command>> = [];
  const pick = fc.nat({ max: 1000 });
  // Small limits most of the time, so that pages and id lookups are cut.
  const smallOrAnyLimit = (parameter: Parameter) => {
    const max = Number(parameter.schema['maximum'] ?? 100);
    const min = Number(parameter.schema['minimum'] ?? 1);
    return fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min, max: Math.min(max, min + 3) }) },
      { weight: 1, arbitrary: fc.integer({ min, max }) },
    );
  };
  const filterOf = (filters: Parameter[]): fc.Arbitrary<Filter> =>
    filters.length === 0
      ? fc.constant(undefined)
      : fc.option(
          fc
            .constantFrom(...filters)
            .chain((parameter) =>
              fc
                .constantFrom(...(parameter.schema['enum'] as string[]))
                .map((value) => ({ name: parameter.name, value })),
            ),
          { nil: undefined, freq: 2 },
        );

  /** Ids of a kind this sequence made, still there and in a state the model knows: what an unsafe request may name. */
  const ownIds = (model: Readonly<Model>, kind: number) => {
    const state = stateOf(model as Model, kind);
    return [...state.made].filter((id) => state.live.has(id) && !state.unsettled.has(id));
  };
  /** A parent made by this sequence for each parent parameter; undefined when one has none. */
  const parentsFor = (model: Readonly<Model>, maker: Maker, pick: number) => {
    const chosen: Record<string, string> = {};
    for (const name of maker.parents) {
      const kind = kindAt(kinds, maker.operation.path, name);
      const at = kind === undefined ? -1 : kinds.indexOf(kind);
      const own = at < 0 ? [] : ownIds(model, at);
      if (own.length === 0) return undefined;
      const key = own[pick % own.length]!;
      chosen[name] = stateOf(model as Model, at).idOfKey.get(key) ?? key;
    }
    return chosen;
  };
  /**
   * Ids of a kind the sequence knows to exist: the ids a reference to it can succeed with. Against a
   * deployment only those it made, so that what it then makes names only its own.
   */
  const liveIds = (model: Readonly<Model>, kind: ResourceKind | undefined) => {
    if (kind === undefined) return [];
    const at = kinds.indexOf(kind);
    const state = stateOf(model as Model, at);
    const keys = options.exclusive
      ? [...state.live.keys()].filter((key) => !state.unsettled.has(key))
      : ownIds(model, at);
    return keys.map((key) => state.idOfKey.get(key) ?? key);
  };
  /**
   * The body with each id of another kind in it (bodyReferences: POST /visits {petId}) set to one the sequence
   * knows to exist, as a parent in the path is; undefined when a kind it names has none yet.
   */
  const referring = (model: Readonly<Model>, operation: Operation, body: unknown, pick: number): unknown => {
    const references = bodyReferences(kinds, operation);
    if (references.length === 0 || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
    const properties = (operation.body?.schema['properties'] ?? {}) as Record<string, Schema>;
    const referred: Record<string, unknown> = { ...(body as Record<string, unknown>) };
    for (const { name, kind } of references) {
      const ids = liveIds(model, kind);
      if (ids.length === 0) return undefined;
      const id = ids[pick % ids.length]!;
      referred[name] = ['integer', 'number'].includes(String(properties[name]?.['type'])) ? Number(id) : id;
    }
    return referred;
  };
  const keyOf = (operation: Operation, withKey: boolean) => {
    const header = idempotencyHeader(operation);
    return withKey && header
      ? { header: header.name.toLowerCase(), key: `${options.keyPrefix}-${(keyCounter += 1)}` }
      : undefined;
  };

  /** The safe operation on an unsafe one's path whose 200 declares ETag: where a current tag is read. */
  const taggedReader = (operation: Operation) =>
    options.operations.find(
      (other) => live(other) && isSafe(other) && other.path === operation.path && declaresHeader(other, 200, 'etag'),
    );
  /**
   * A resource removed: what refers to it by its id (an adoption of it) or lives under it may be gone with it
   * (ON DELETE CASCADE) or kept; the model compares them no more.
   */
  const forgetDependents = (model: Model, removed: ResourceKind, id: string) => {
    kinds.forEach((other, at) => {
      if (other === removed) return;
      const state = stateOf(model, at);
      const refers = other.makers.some((maker) => referencedKind(kinds, maker) === removed);
      const under = other.makers.flatMap((maker) =>
        maker.parents.filter((name) => kindAt(kinds, maker.operation.path, name) === removed),
      );
      // An id of it in the body that made one (a visit's petId): a reference the store may cascade too.
      const inBody = other.makers.flatMap((maker) =>
        bodyReferences(kinds, maker.operation)
          .filter((reference) => reference.kind === removed)
          .map(({ name }) => name),
      );
      for (const [key, resource] of state.live) {
        const named = refers && (state.idOfKey.get(key) ?? key) === id;
        const child = under.some((name) => state.parents.get(key)?.[name] === id);
        const cites = inBody.some((name) => resource[name] !== undefined && String(resource[name]) === id);
        if (named || child || cites) {
          state.live.delete(key);
          state.unsettled.add(key);
        }
      }
    });
  };

  /**
   * The If-Match an unsafe operation sends, when it declares If-Match and 412: none, now and then a stale tag
   * (412), or the current one read from the safe operation on its path (success).
   */
  const preconditionsOf = (operation: Operation): fc.Arbitrary<Precondition> =>
    declaresHeaderParameter(operation, 'if-match') && declares(operation, 412)
      ? fc.constantFrom<Precondition>('none', 'stale', ...(taggedReader(operation) ? (['current'] as const) : []))
      : fc.constant('none');

  /** A safe operation with ETag on a success and a declared 304: its read is revalidated. */
  const revalidates = (operation: Operation) =>
    successes(operation).some((status) => declaresHeader(operation, status, 'etag')) && declares(operation, 304);

  /** Each maker's Create, to build the compound commands below. */
  const creates = new Map<Maker, (conflict: boolean) => fc.Arbitrary<Command>>();

  kinds.forEach((kind, index) => {
    const idOf = (resource: unknown) =>
      kind.idPointer === undefined ? undefined : String(atPointer(resource, kind.idPointer) as string | number);
    // A resource with no id of its own (PUT /pets/{petId}/microchip): its parents name it, and key it.
    const singleton = kind.makers.find((maker) => maker.singleton);
    // A status monitor, named by a 202: its representation is the server's to change.
    const monitor = kind.makers.some((maker) => maker.accepted);
    const itemOperations = options.operations.filter(
      (operation) =>
        live(operation) &&
        kind.itemPaths.has(operation.path) &&
        (singleton !== undefined || kind.pathParameters.has(itemParameter(operation)?.name ?? '')),
    );
    // The item one segment under the maker's collection, or a top-level maker's only item path elsewhere (the
    // monitor a 202 links to), while an operation there is live.
    const itemPathOf = (maker: Maker) =>
      itemOperations.find(
        (operation) =>
          operation.path.startsWith(maker.operation.path) &&
          /^\/\{[^}/]+\}$/.test(operation.path.slice(maker.operation.path.length)),
      )?.path ??
      (maker.parents.length === 0 && kind.itemPaths.size === 1
        ? itemOperations.find((operation) => kind.itemPaths.has(operation.path))?.path
        : undefined);
    /** The path parameters naming one resource of this kind: its parents' as made, and its own id (a singleton has none). */
    const pathOf = (state: KindState, parameter: Parameter | undefined, key: string): Record<string, string> => ({
      ...state.parents.get(key),
      ...(parameter === undefined ? {} : { [parameter.name]: state.idOfKey.get(key) ?? key }),
    });
    /**
     * Where a singleton may be and is not: under each parent this sequence made (the last parent's kind keeps
     * the others), by key; a read there is the declared 404.
     */
    /** Parents this sequence made and removed, where a singleton can no longer be put (its declared 404). */
    const removedParents = (model: Readonly<Model>, pick: number): Record<string, string> | undefined => {
      const last = singleton?.parents.at(-1);
      const parentKind = last === undefined ? undefined : kindAt(kinds, singleton!.operation.path, last);
      if (parentKind === undefined) return undefined;
      const parentState = stateOf(model as Model, kinds.indexOf(parentKind));
      const gone = [...parentState.removed].filter((key) => !parentState.unsettled.has(key));
      const key = gone[pick % Math.max(1, gone.length)];
      return key === undefined
        ? undefined
        : { ...parentState.parents.get(key), [last!]: parentState.idOfKey.get(key) ?? key };
    };
    const absentSingletons = (model: Readonly<Model>): Map<string, Record<string, string>> => {
      const absent = new Map<string, Record<string, string>>();
      const last = singleton?.parents.at(-1);
      const parentKind = last === undefined ? undefined : kindAt(kinds, singleton!.operation.path, last);
      if (parentKind === undefined) return absent;
      const at = kinds.indexOf(parentKind);
      const parentState = stateOf(model as Model, at);
      const state = stateOf(model as Model, index);
      for (const parentKey of ownIds(model, at)) {
        const parents = {
          ...parentState.parents.get(parentKey),
          [last!]: parentState.idOfKey.get(parentKey) ?? parentKey,
        };
        const key = keyOfParents(singleton!.parents, parents);
        if (!state.live.has(key) && !state.unsettled.has(key)) absent.set(key, parents);
      }
      return absent;
    };

    for (const maker of kind.makers.filter((candidate) => live(candidate.operation))) {
      // A PUT may make what its path names with no body (an adoption of a pet).
      const named = maker.clientId
        ? fc.record({
            drawn: valid(maker.clientId.schema).map(String),
            reuse: fc.option(pick, { nil: undefined, freq: 2 }),
            createOnly: fc.boolean(),
          })
        : maker.singleton
          ? fc.record({
              drawn: fc.constant(''),
              reuse: fc.constant(undefined),
              createOnly: fc.boolean(),
              orphan: declares(maker.operation, 404) ? fc.boolean() : fc.constant(false),
            })
          : fc.constant(undefined);
      const create = (conflict: boolean) =>
        fc
          .tuple(bodiesOf(maker.operation), fc.boolean(), pick, named)
          .map(
            ([body, withKey, which, name]): Command =>
              new Create(maker, body, withKey, which, name && { ...name, conflict }),
          );
      commands.push(create(false));
      creates.set(maker, create);
    }

    /**
     * The id a caller names (a PUT maker): drawn from the parameter's schema, or now and then one the model
     * knows (one of the kind it refers to, which can succeed, or one this kind has: a replace, or the declared
     * 412 to a create-only request, or the declared 409 when another parent has it).
     */
    const namedId = (model: Readonly<Model>, maker: Maker, name: ClientName): string => {
      if (name.reuse === undefined) return name.drawn;
      const state = stateOf(model as Model, index);
      // Against a deployment, only ids this run made: a replace of another's is never asked for.
      const own = options.exclusive ? [...state.live.keys()] : ownIds(model, index);
      const known = [
        ...liveIds(model, referencedKind(kinds, maker)),
        ...own.map((key) => state.idOfKey.get(key) ?? key),
      ];
      return known.length === 0 ? name.drawn : known[name.reuse % known.length]!;
    };
    /** An id this kind has under one parent, and another parent of the sequence's to send it under. */
    const conflictOf = (model: Readonly<Model>, maker: Maker) => {
      const state = stateOf(model as Model, index);
      const name = maker.parents[0];
      const parentKind = name === undefined ? undefined : kindAt(kinds, maker.operation.path, name);
      if (parentKind === undefined) return undefined;
      const parentState = stateOf(model as Model, kinds.indexOf(parentKind));
      const parentIds = ownIds(model, kinds.indexOf(parentKind)).map((key) => parentState.idOfKey.get(key) ?? key);
      for (const key of state.live.keys()) {
        const parents = state.parents.get(key) ?? {};
        const other = parentIds.find((id) => id !== parents[name!]);
        if (other !== undefined) return { parents: { ...parents, [name!]: other }, id: state.idOfKey.get(key) ?? key };
      }
      return undefined;
    };
    const keyFor = (maker: Maker, parents: Record<string, string>, id: string) =>
      maker.parents.length === 0 ? id : JSON.stringify([...maker.parents.map((name) => parents[name]), id]);

    class Create implements Command {
      constructor(
        readonly maker: Maker,
        readonly body: unknown,
        readonly withKey: boolean,
        readonly pick: number,
        readonly name?: ClientName,
      ) {}
      // Against a deployment, a caller-named create only where it can be create-only (If-None-Match: *).
      check = (model: Readonly<Model>) =>
        !options.readOnly &&
        (options.exclusive ||
          this.maker.clientId === undefined ||
          declaresHeaderParameter(this.maker.operation, 'if-none-match')) &&
        (this.name?.orphan
          ? removedParents(model, this.pick) !== undefined
          : parentsFor(model, this.maker, this.pick) !== undefined) &&
        (this.body === undefined || referring(model, this.maker.operation, this.body, this.pick) !== undefined);
      async run(model: Model, real: StatefulTransport) {
        const operation = this.maker.operation;
        const body = this.body === undefined ? undefined : referring(model, operation, this.body, this.pick);
        const conflict = this.name?.conflict ? conflictOf(model, this.maker) : undefined;
        const orphaned = this.name?.orphan ? removedParents(model, this.pick) : undefined;
        const parents = conflict?.parents ?? orphaned ?? parentsFor(model, this.maker, this.pick)!;
        const state = stateOf(model, index);
        const clientId = this.maker.clientId;
        const named = conflict?.id ?? (clientId && this.name ? namedId(model, this.maker, this.name) : undefined);
        const pathParams = named === undefined ? parents : { ...parents, [clientId!.name]: named };
        // A singleton's key is its parents': a PUT there creates it or replaces it, as one to a named id.
        const modelKey = this.maker.singleton
          ? keyOfParents(this.maker.parents, parents)
          : named === undefined
            ? undefined
            : keyFor(this.maker, parents, named);
        // A caller-named create is create-only where the spec lets it say so: against a deployment, always.
        const createOnly =
          modelKey !== undefined &&
          declaresHeaderParameter(operation, 'if-none-match') &&
          (this.name!.createOnly || !options.exclusive);
        const key = keyOf(operation, this.withKey);
        const sent = withBody(operation, 'create', body, {
          pathParams,
          headers: { ...(key ? { [key.header]: key.key } : {}), ...(createOnly ? { 'if-none-match': '*' } : {}) },
        });
        const what = `${operation.operationId}${named === undefined ? '' : ` ${JSON.stringify(pathParams)}`}`;
        const expected =
          orphaned !== undefined
            ? [404]
            : modelKey === undefined
              ? [this.maker.status]
              : this.expectedOfNamed(model, named ?? modelKey, modelKey, createOnly);
        const answer = await real.send(sent);
        if (!expectStatus(what, answer, expected)) return;
        if (modelKey !== undefined && answer.status !== this.maker.status) {
          // Refused by state (404, 409, 412): nothing changed. A replace: the model's copy is the answer.
          if (answer.status < 300) {
            const bytes = bytesKept(sent, answer);
            const resource = bytes ? {} : (bodyOf(what, answer) as Resource);
            const fields = fieldsSent(sent);
            if (fields) checkFieldsSent(what, resource, fields);
            if (state.live.has(modelKey!) || !options.exclusive) {
              state.live.set(modelKey!, resource);
              if (bytes) state.bytes.set(modelKey!, bytes);
            }
          }
          return;
        }
        const bytes = bytesKept(sent, answer);
        const resource = bytes ? {} : (bodyOf(what, answer) as Resource);
        const fields = fieldsSent(sent);
        if (fields) checkFieldsSent(what, resource, fields, operation.body?.schema);
        const id = modelKey ?? this.maker.idOf(resource, answer.headers.get('location'), pathParams);
        if (id === undefined) throw new ModelMismatch(`${what}: no id in the answer ${answer.text.slice(0, 200)}`);
        // The server picks the id: never one it gave before, and above the highest it gave.
        const picked = modelKey === undefined;
        if (state.live.has(id) || (picked && state.made.has(id)))
          throw new ModelMismatch(`${what} answered id ${id}, which exists`);
        const highest = [...state.live.keys()].sort(compareIds).at(-1);
        // Numbered by the server (a sequence), ids rise; other ids (a UUID) have no order to keep.
        const numbered = /^\d+$/.test(id) && highest !== undefined && /^\d+$/.test(highest);
        if (picked && options.exclusive && numbered && compareIds(id, highest) <= 0)
          throw new ModelMismatch(`${what} answered id ${id}, not above the highest id ${highest}`);
        const itemPath = picked ? itemPathOf(this.maker) : operation.path;
        if (itemPath !== undefined && declaresHeader(operation, this.maker.status, 'location')) {
          const own = itemParameter(itemOperations.find((item) => item.path === itemPath) ?? operation);
          const values: Record<string, string> = {
            ...parents,
            ...(own === undefined ? {} : { [own.name]: named ?? id }),
          };
          compare(
            'Location',
            answer.headers.get('location'),
            `${options.basePath}${itemPath.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ''))}`,
          );
        }
        if (answer.headers.get('idempotent-replayed') !== null)
          throw new ModelMismatch('a first create carries Idempotent-Replayed');
        state.live.set(id, resource);
        if (bytes) state.bytes.set(id, bytes);
        else state.bytes.delete(id);
        state.made.add(id);
        state.removed.delete(id);
        if (named !== undefined && named !== id) state.idOfKey.set(id, named);
        if (this.maker.parents.length > 0) state.parents.set(id, parents);
        if (key)
          model.keys.push({
            operationId: operation.operationId,
            key: key.key,
            pathParams,
            body: String(sent.body),
            status: answer.status,
            answer: resource,
          });
      }
      /**
       * What a PUT to a caller-named id may answer, by what the model knows: 412 to a create-only request
       * for one that exists; a replace (another 2xx) otherwise; 409 when another parent has the id; 404 when
       * it refers to a resource not there. Against a deployment the store holds more than the model: each
       * declared refusal may come, and a replace of an id the run did not make is never asked for.
       */
      private expectedOfNamed(model: Readonly<Model>, named: string, key: string, createOnly: boolean): number[] {
        const operation = this.maker.operation;
        const state = stateOf(model as Model, index);
        const declared = (status: number) => (declares(operation, status) ? [status] : []);
        const others = successes(operation).filter((status) => status !== this.maker.status);
        const replaced = others.length > 0 ? others : [this.maker.status];
        if (!options.exclusive)
          return [this.maker.status, ...(createOnly ? declared(412) : replaced), ...declared(409), ...declared(404)];
        const referenced = referencedKind(kinds, this.maker);
        if (referenced !== undefined && !liveIds(model, referenced).includes(named) && declares(operation, 404))
          return [404];
        if (state.live.has(key)) return createOnly && declares(operation, 412) ? [412] : replaced;
        // Another parent has this id: a conflict, where the spec declares one (the pet adopted by another owner).
        const elsewhere = [...state.live.keys()].some((other) => (state.idOfKey.get(other) ?? other) === named);
        return elsewhere ? [this.maker.status, ...declared(409)] : [this.maker.status];
      }
      toString = () =>
        `create(${this.maker.operation.operationId}, ${JSON.stringify(this.body)}${this.withKey ? ', with a key' : ''}, ${this.pick}${this.name ? `, ${JSON.stringify(this.name)}` : ''})`;
    }

    for (const operation of itemOperations) {
      const parameter = itemParameter(operation);
      const missing = parameter === undefined ? [] : missingIds(parameter.schema);
      if (isSafe(operation)) {
        const success = successes(operation);
        const conditional =
          success.some((status) => declaresHeader(operation, status, 'etag')) && declares(operation, 304);
        commands.push(
          fc
            .tuple(fc.option(pick, { nil: undefined, freq: 5 }), fc.boolean())
            .map(
              ([which, revalidating]) => new Read(operation, parameter, missing, which, conditional && revalidating),
            ),
        );
      } else {
        const body = bodiesOf(operation);
        commands.push(
          fc
            .tuple(pick, body, fc.boolean(), preconditionsOf(operation))
            .map(
              ([which, sent, withKey, precondition]) =>
                new Change(operation, parameter, which, sent, false, withKey, precondition),
            ),
        );
      }
    }

    // Operations on a path under one resource (its notes): another resource, which leaves the parent as it was.
    // One on another kind's own path (the pet's microchip) is that kind's, modelled with it.
    const makes = new Set(kinds.flatMap((other) => other.makers.map((maker) => maker.operation)));
    const ofAnotherKind = (operation: Operation) =>
      kinds.some((other) => other !== kind && other.itemPaths.has(operation.path));
    for (const item of itemOperations.filter(
      (operation, at, all) => all.findIndex((o) => o.path === operation.path) === at,
    )) {
      const names = pathParameters(item)
        .map(({ name }) => name)
        .sort()
        .join();
      const parameter = itemParameter(item);
      const under = options.operations.filter(
        (operation) =>
          live(operation) &&
          !makes.has(operation) &&
          !ofAnotherKind(operation) &&
          operation.path.startsWith(`${item.path}/`) &&
          pathParameters(operation)
            .map(({ name }) => name)
            .sort()
            .join() === names,
      );
      for (const operation of under) {
        const missing = parameter === undefined ? [] : missingIds(parameter.schema);
        // An action on the item (POST /pets/{petId}/sale answering the pet): it changes the item, not another
        // resource under it; what it answers replaces the model's copy.
        const actsOnItem = successes(operation).some((status) =>
          same(operation.responses.get(String(status))?.schema, kind.schema),
        );
        if (isSafe(operation))
          commands.push(
            fc
              .tuple(fc.option(pick, { nil: undefined, freq: 5 }), fc.boolean())
              .map(
                ([which, revalidating]) =>
                  new Read(operation, parameter, missing, which, revalidating && revalidates(operation)),
              ),
          );
        else {
          const body = bodiesOf(operation);
          commands.push(
            fc
              .tuple(pick, body, fc.boolean(), preconditionsOf(operation))
              .map(
                ([which, sent, withKey, precondition]) =>
                  new Change(operation, parameter, which, sent, !actsOnItem, withKey, precondition),
              ),
          );
        }
      }
    }

    class Read implements Command {
      constructor(
        readonly operation: Operation,
        readonly parameter: Parameter | undefined,
        readonly missing: string[],
        readonly pick: number | undefined,
        readonly conditional: boolean,
      ) {}
      check = () => true;
      async run(model: Model, real: StatefulTransport) {
        const state = stateOf(model, index);
        const absent = singleton === undefined ? new Map<string, Record<string, string>>() : absentSingletons(model);
        const known = [...state.live.keys(), ...state.removed, ...absent.keys()].filter(
          (id) => !state.unsettled.has(id),
        );
        const choice = this.pick === undefined || known.length === 0 ? undefined : known[this.pick % known.length];
        const id = choice ?? this.missing[(this.pick ?? 0) % Math.max(1, this.missing.length)];
        if (id === undefined) return;
        const found = state.live.get(id);
        if (found === undefined && !declares(this.operation, 404)) return;
        const pathParams = absent.get(id) ?? pathOf(state, this.parameter, id);
        // A missing id of a resource under another: no parent to name.
        if (pathParameters(this.operation).some((parameter) => pathParams[parameter.name] === undefined)) return;
        const sent = request(this.operation, 'read', { pathParams });
        const what = `${this.operation.operationId} ${id}`;
        const answer = await real.send(sent);
        if (found === undefined) {
          expectStatus(what, answer, [404]);
          return;
        }
        if (!expectStatus(what, answer, successes(this.operation))) return;
        const response = this.operation.responses.get(String(answer.status));
        if (response?.schema !== undefined && same(response.schema, kind.schema)) {
          // What a 202 named (a status monitor, RFC 9110 15.3.3) moves on without a request: the same id only.
          if (monitor) compare(`${what}: the id`, idOf(answer.json), idOf(found));
          else compare(what, answer.json, found);
        }
        const put = state.bytes.get(id);
        if (put !== undefined && response?.kind === 'bytes') compareBytes(what, answer, put);
        if (this.conditional) await revalidate(real, sent, answer);
      }
      toString = () =>
        `${this.operation.operationId}(${this.pick ?? 'missing'}${this.conditional ? ', then If-None-Match' : ''})`;
    }

    /** The ids an unsafe request may name: made by this sequence, in a state the model knows (removed ones too: a 404). */
    const ownOrRemoved = (model: Readonly<Model>) =>
      [...stateOf(model as Model, index).made].filter((id) => !stateOf(model as Model, index).unsettled.has(id));

    /**
     * An unsafe request naming a resource this sequence made (`under`: a path below it, another resource):
     * success while it exists, its declared 404 once removed. On the resource itself, a DELETE removes it and
     * an answer with its representation replaces the model's copy; under it, the resource stays as it was.
     */
    class Change implements Command {
      constructor(
        readonly operation: Operation,
        readonly parameter: Parameter | undefined,
        readonly pick: number,
        readonly body: unknown,
        readonly under: boolean,
        readonly withKey: boolean,
        readonly precondition: Precondition = 'none',
      ) {}
      check = (model: Readonly<Model>) => !options.readOnly && ownOrRemoved(model).length > 0;
      async run(model: Model, real: StatefulTransport) {
        const state = stateOf(model, index);
        const own = ownOrRemoved(model);
        const id = own[this.pick % own.length]!;
        const before = state.live.get(id);
        // A PUT that creates: to a removed id it makes it again (Create's to send); elsewhere the declared 404.
        const creates = !this.under && createsAtPath(this.operation);
        if (before === undefined && (creates || !declares(this.operation, 404))) return;
        const key = keyOf(this.operation, this.withKey);
        const pathParams = pathOf(state, this.parameter, id);
        const tag = await this.tagFor(real, pathParams, before);
        if (tag === null) return;
        const parts = {
          pathParams,
          headers: { ...auth, ...(key ? { [key.header]: key.key } : {}), ...(tag ? { 'if-match': tag } : {}) },
        };
        const intent =
          this.precondition !== 'none' ? `If-Match, ${this.precondition}` : this.under ? 'under' : 'change';
        const sent =
          this.body === undefined
            ? request(this.operation, intent, parts)
            : withBody(this.operation, intent, this.body, parts);
        const what = `${this.operation.operationId} ${this.under ? 'under ' : ''}${id}${tag ? ` If-Match ${tag}` : ''}`;
        const answer = await real.send(sent);
        if (before === undefined) {
          // RFC 9110 13.1.1: If-Match is false without a current representation.
          expectStatus(`${what}, removed before`, answer, this.precondition === 'stale' ? [404, 412] : [404]);
          return;
        }
        if (this.precondition === 'stale') {
          expectStatus(`${what}, a stale tag`, answer, [412]);
          return;
        }
        const changed = successes(this.operation).filter((status) => !creates || status !== 201);
        // RFC 9110 15.5.10: a conflict with the target's current state (a pet sold already), which the model
        // does not keep; sent without an Idempotency-Key, a declared 409 can mean nothing else. Nothing changed.
        const conflict = key === undefined && declares(this.operation, 409) ? [409] : [];
        if (!expectStatus(what, answer, [...changed, ...conflict])) return;
        if (answer.status === 409) return;
        if (answer.headers.get('idempotent-replayed') !== null)
          throw new ModelMismatch(`${what}: a first request carries Idempotent-Replayed`);
        if (key && sent.body !== undefined)
          model.keys.push({
            operationId: this.operation.operationId,
            key: key.key,
            pathParams,
            body: String(sent.body),
            status: answer.status,
            answer: answer.json,
          });
        if (this.under) return;
        if (this.operation.method === 'DELETE') {
          state.live.delete(id);
          state.bytes.delete(id);
          state.removed.add(id);
          forgetDependents(model, kind, state.idOfKey.get(id) ?? id);
          return;
        }
        const bytes = bytesKept(sent, answer);
        if (bytes) {
          state.bytes.set(id, bytes);
          return;
        }
        const response = this.operation.responses.get(String(answer.status));
        if (response?.schema === undefined || !same(response.schema, kind.schema)) {
          state.unsettled.add(id);
          state.live.delete(id);
          return;
        }
        const resource = bodyOf(what, answer) as Resource;
        compare(`${what}: the id`, idOf(resource), idOf(before));
        const fields = fieldsSent(sent);
        if (fields) checkFieldsSent(what, resource, fields);
        state.live.set(id, resource);
      }
      /**
       * The If-Match tag to send: none; one no representation has (`stale`: the declared 412); or the
       * current one (`current`), read from the item's GET first. null: no current tag to be had.
       */
      private async tagFor(
        real: StatefulTransport,
        pathParams: Record<string, string>,
        before: Resource | undefined,
      ): Promise<string | undefined | null> {
        if (this.precondition === 'stale') return '"stale-tag-of-the-model"';
        if (this.precondition === 'none' || before === undefined)
          return this.precondition === 'none' ? undefined : null;
        const reader = taggedReader(this.operation);
        if (reader === undefined) return null;
        const read = await real.send(request(reader, 'the tag for If-Match', { pathParams }));
        if (!expectStatus(`${reader.operationId} for its ETag`, read, [200])) return null;
        return read.headers.get('etag');
      }
      toString = () =>
        `${this.operation.operationId}${this.under ? ' under' : ''}(${this.pick}, ${JSON.stringify(this.body)}${this.withKey ? ', with a key' : ''}${this.precondition === 'none' ? '' : `, If-Match ${this.precondition}`})`;
    }

    const collectionReads = options.operations.filter(
      (operation) =>
        live(operation) &&
        isSafe(operation) &&
        pathParameters(operation).length === 0 &&
        kind.makers.some((maker) => maker.operation.path === operation.path),
    );
    for (const operation of collectionReads) {
      const filters = filterOf(filtersOf(operation, kind));
      const limit = queryParameter(operation, 'limit');
      const limits = limit ? fc.option(smallOrAnyLimit(limit), { nil: undefined, freq: 2 }) : fc.constant(undefined);
      const lookup = operation.parameters.find(
        (parameter) => parameter.in === 'query' && kind.lookupParameters.has(parameter.name),
      );
      const conditional = declaresHeader(operation, 200, 'etag') && declares(operation, 304);
      if (lookup && kind.idPointer !== undefined) {
        const items = (lookup.schema['items'] ?? {}) as Schema;
        const missing = unassignedIds.filter((id) => takes(items, id));
        commands.push(
          fc
            .record({
              picks: fc.array(pick, { maxLength: 8 }),
              missing: fc.integer({ min: 0, max: Math.min(2, missing.length) }),
              filter: filters,
              limit: limits,
              cursor: fc.option(pick, { nil: undefined, freq: 2 }),
            })
            .map((choice) => new Lookup(operation, lookup, missing, choice)),
        );
        if (conditional)
          commands.push(
            fc
              .array(pick, { minLength: 1, maxLength: 4 })
              .map((picks) => new ConditionalLookup(operation, lookup, picks)),
          );
      }
      if (declaresHeader(operation, 200, 'link') && kind.idPointer !== undefined) {
        const walkLimits = limit ? smallOrAnyLimit(limit) : fc.constant(undefined);
        commands.push(fc.tuple(filters, walkLimits).map(([filter, size]) => new Walk(operation, filter, size)));
      }
    }

    class Lookup implements Command {
      constructor(
        readonly operation: Operation,
        readonly lookup: Parameter,
        readonly unassigned: string[],
        readonly choice: {
          picks: number[];
          missing: number;
          filter: Filter;
          limit: number | undefined;
          cursor: number | undefined;
        },
      ) {}
      check = () => true;
      async run(model: Model, real: StatefulTransport) {
        const state = stateOf(model, index);
        const known = [...state.live.keys(), ...state.removed].filter((id) => !state.unsettled.has(id));
        const ids = known.length === 0 ? [] : this.choice.picks.map((which) => known[which % known.length]!);
        const asked = [...ids, ...this.unassigned.slice(0, this.choice.missing)];
        if (asked.length === 0) {
          if (this.unassigned[0] === undefined) return;
          asked.push(this.unassigned[0]);
        }
        const cursors = model.cursors.get(this.operation.operationId) ?? [];
        const cursor =
          this.choice.cursor === undefined || cursors.length === 0 || !queryParameter(this.operation, 'cursor')
            ? undefined
            : cursors[this.choice.cursor % cursors.length];
        const query: Array<[string, string]> = asked.map((id) => [this.lookup.name, id]);
        if (this.choice.filter) query.push([this.choice.filter.name, this.choice.filter.value]);
        if (this.choice.limit !== undefined) query.push(['limit', String(this.choice.limit)]);
        if (cursor) query.push(['cursor', cursor.cursor]);
        const what = `${this.operation.operationId} ?${new URLSearchParams(query).toString()}`;
        const answer = await real.send(request(this.operation, 'lookup by id', { query }));
        if (!expectStatus(what, answer, [200])) return;
        const expected = [...new Set(ids)]
          .filter((id) => state.live.has(id))
          .sort(compareIds)
          .map((id) => state.live.get(id)!)
          .filter((resource) => passes(resource, this.choice.filter))
          .filter((resource) => !cursor || compareIds(idOf(resource)!, cursor.afterId) > 0)
          .slice(0, this.choice.limit ?? Infinity);
        compare(what, answer.json, expected);
        if (answer.headers.get('link') !== null) throw new ModelMismatch(`${what}: an id lookup carries a Link`);
      }
      toString = () => `${this.operation.operationId} by id(${JSON.stringify(this.choice)})`;
    }

    class ConditionalLookup implements Command {
      constructor(
        readonly operation: Operation,
        readonly lookup: Parameter,
        readonly picks: number[],
      ) {}
      check = (model: Readonly<Model>) => stateOf(model as Model, index).live.size > 0;
      async run(model: Model, real: StatefulTransport) {
        const state = stateOf(model, index);
        const known = [...state.live.keys()];
        const ids = this.picks.map((which) => known[which % known.length]!);
        const query = ids.map((id) => [this.lookup.name, id] as [string, string]);
        const sent = request(this.operation, 'conditional lookup by id', { query });
        const what = `${this.operation.operationId} ?${new URLSearchParams(query).toString()}`;
        const answer = await real.send(sent);
        if (!expectStatus(what, answer, [200])) return;
        compare(
          what,
          answer.json,
          [...new Set(ids)].sort(compareIds).map((id) => state.live.get(id)),
        );
        await revalidate(real, sent, answer);
      }
      toString = () => `conditional ${this.operation.operationId} by id(${JSON.stringify(this.picks)})`;
    }

    class Walk implements Command {
      constructor(
        readonly operation: Operation,
        readonly filter: Filter,
        readonly limit: number | undefined,
      ) {}
      check = () => true;
      async run(model: Model, real: StatefulTransport) {
        const state = stateOf(model, index);
        const query: Array<[string, string]> = this.limit === undefined ? [] : [['limit', String(this.limit)]];
        if (this.filter) query.push([this.filter.name, this.filter.value]);
        const label = `walk limit=${this.limit} ${describeFilter(this.filter)}`;
        const first = request(this.operation, label, { query });
        const seen: Resource[] = [];
        let url: string | undefined;
        const maxPages = options.exclusive ? Infinity : (options.maxPages ?? 5);
        let pages = 0;
        for (; pages < maxPages; pages += 1) {
          const answer = await real.send(first, url);
          if (!expectStatus(`${label}, page ${pages + 1}`, answer, [200])) return;
          const page = bodyOf(`${label}, page ${pages + 1}`, answer) as Resource[];
          if (this.limit !== undefined && page.length > this.limit)
            throw new ModelMismatch(`a page of ${page.length} for limit ${this.limit}`);
          for (const resource of page) {
            const id = idOf(resource)!;
            const previous = seen.at(-1);
            if (previous !== undefined && compareIds(id, idOf(previous)!) <= 0)
              throw new ModelMismatch(`ids not rising: ${id} after ${idOf(previous)}`);
            if (!passes(resource, this.filter))
              throw new ModelMismatch(`${JSON.stringify(resource)} in a walk with ${describeFilter(this.filter)}`);
            const modelled = state.live.get(id);
            if (modelled) compare(`walk, ${id}`, resource, modelled);
            else if (state.removed.has(id)) throw new ModelMismatch(`walk lists ${id}, which was removed`);
            else if (options.exclusive && !state.unsettled.has(id))
              throw new ModelMismatch(`walk lists ${id}, which the model lacks`);
            else if (!state.unsettled.has(id)) state.live.set(id, resource);
            seen.push(resource);
          }
          const next = nextLinkOf(answer);
          if (next === undefined) break;
          if (this.limit !== undefined && page.length < this.limit)
            throw new ModelMismatch(`a short page (${page.length}) links to a next page`);
          const cursor = cursorOf(next, 'cursor');
          if (cursor && seen.length > 0) {
            const issued = model.cursors.get(this.operation.operationId) ?? [];
            issued.push({ cursor, afterId: idOf(seen.at(-1))! });
            model.cursors.set(this.operation.operationId, issued);
          }
          url = next;
        }
        if (pages >= maxPages) return;
        const settled = seen.filter((resource) => !state.unsettled.has(idOf(resource)!));
        const expected = [...state.live.values()]
          .filter((resource) => passes(resource, this.filter))
          .sort((a, b) => compareIds(idOf(a)!, idOf(b)!));
        if (options.exclusive) compare(label, settled, expected);
        else {
          const listed = new Set(seen.map((resource) => idOf(resource)));
          const absent = expected.map((resource) => idOf(resource)!).filter((id) => !listed.has(id));
          if (absent.length > 0) throw new ModelMismatch(`a whole walk misses known resources ${absent.join(', ')}`);
        }
      }
      toString = () => `walk ${this.operation.operationId}(${describeFilter(this.filter)}, limit=${this.limit})`;
    }
  });

  /*
   * A conflict the spec declares (409) on what a caller names under a parent: the steps that lead to one, as
   * one command, so that short sequences reach it too: two parents, what the id refers to, the resource
   * under the first parent, then its id under the second.
   */
  for (const maker of creates.keys()) {
    if (maker.clientId === undefined || maker.parents.length === 0 || !declares(maker.operation, 409)) continue;
    const parentMakers = maker.parents.flatMap((name) => kindAt(kinds, maker.operation.path, name)?.makers ?? []);
    const referenced = referencedKind(kinds, maker)?.makers ?? [];
    const steps = [
      ...parentMakers.flatMap((parent) => [creates.get(parent)?.(false), creates.get(parent)?.(false)]),
      ...referenced.map((other) => creates.get(other)?.(false)),
      creates.get(maker)!(false),
      creates.get(maker)!(true),
    ];
    if (steps.some((step) => step === undefined)) continue;
    commands.push(fc.tuple(...(steps as Array<fc.Arbitrary<Command>>)).map((parts) => new Steps(parts)));
  }

  // A singleton under a parent made just before, as one command: among the spec's many commands, short
  // sequences then reach a read, a replace and a removal of one.
  for (const maker of creates.keys()) {
    if (!maker.singleton) continue;
    const parentMakers = maker.parents.flatMap(
      (name) => kindAt(kinds, maker.operation.path, name)?.makers.slice(0, 1) ?? [],
    );
    const steps = [...parentMakers.map((parent) => creates.get(parent)?.(false)), creates.get(maker)!(false)];
    if (steps.some((step) => step === undefined)) continue;
    commands.push(fc.tuple(...(steps as Array<fc.Arbitrary<Command>>)).map((parts) => new Steps(parts)));
  }

  // Every unsafe operation that declares an Idempotency-Key: its keys replayed, by what it declares.
  for (const operation of options.operations.filter(
    (candidate) =>
      live(candidate) && !isSafe(candidate) && candidate.body !== undefined && idempotencyHeader(candidate),
  ))
    commands.push(
      fc
        .tuple(pick, fc.boolean(), bodiesOf(operation))
        .map(([which, sameBody, other]) => new Replay(operation, which, sameBody, other)),
    );

  /** Commands run in turn, each when its own check allows. */
  class Steps implements Command {
    constructor(readonly parts: Command[]) {}
    check = () => !options.readOnly;
    async run(model: Model, real: StatefulTransport) {
      for (const part of this.parts) if (part.check(model)) await part.run(model, real);
    }
    toString = () => `steps(${this.parts.map(String).join(', ')})`;
  }

  class Replay implements Command {
    constructor(
      readonly operation: Operation,
      readonly pick: number,
      readonly sameBody: boolean,
      readonly other: unknown,
    ) {}
    private keysOf = (model: Readonly<Model>) =>
      model.keys.filter((used) => used.operationId === this.operation.operationId);
    check = (model: Readonly<Model>) =>
      !options.readOnly && this.keysOf(model).length > 0 && (this.sameBody || declares(this.operation, 422));
    async run(model: Model, real: StatefulTransport) {
      const operation = this.operation;
      const keys = this.keysOf(model);
      const used = keys[this.pick % keys.length]!;
      const header = idempotencyHeader(operation)!.name.toLowerCase();
      const other = withBody(operation, 'replay, another body', this.other);
      if (!this.sameBody && same(JSON.parse(String(other.body)), JSON.parse(used.body))) return;
      const body = this.sameBody ? used.body : String(other.body);
      const headers = {
        ...auth,
        'content-type': operation.body?.mediaType ?? 'application/json',
        [header]: used.key,
      };
      const answer = await real.send(request(operation, 'replay', { pathParams: used.pathParams, headers, body }));
      const what = `${operation.operationId} replay`;
      if (this.sameBody) {
        if (!expectStatus(`${what}, same body`, answer, [used.status])) return;
        compare(`${what} body`, answer.json, used.answer);
        if (declaresHeader(operation, used.status, 'idempotent-replayed'))
          compare(`${what} Idempotent-Replayed`, answer.headers.get('idempotent-replayed'), 'true');
      } else expectStatus(`${what}, another body`, answer, [422]);
    }
    toString = () =>
      `replay ${this.operation.operationId}(${this.pick}, ${this.sameBody ? 'same body' : 'another body'})`;
  }

  /** The same GET with the ETag: 304 with that ETag; with another tag: 200 again. */
  async function revalidate(real: StatefulTransport, sent: TestRequest, first: Observed): Promise<void> {
    const etag = first.headers.get('etag');
    if (etag === null) throw new ModelMismatch(`${sent.operationId}: a ${first.status} without an ETag`);
    const again = await real.send({
      ...sent,
      intent: 'If-None-Match',
      headers: { ...sent.headers, 'if-none-match': etag },
    });
    if (expectStatus(`${sent.operationId} If-None-Match ${etag}`, again, [304])) {
      compare('304 ETag', again.headers.get('etag'), etag);
      if (again.text !== '') throw new ModelMismatch('a 304 with a body');
    }
    const stale = await real.send({
      ...sent,
      intent: 'If-None-Match, another tag',
      headers: { ...sent.headers, 'if-none-match': '"other"' },
    });
    if (expectStatus(`${sent.operationId} If-None-Match "other"`, stale, [first.status]) && !sameBody(stale, first))
      throw new ModelMismatch(
        `${first.status} after another tag: got ${JSON.stringify(stale.text)} (${stale.bytes?.length ?? stale.text.length} bytes), the first answer ${JSON.stringify(first.text)} (${first.bytes?.length ?? first.text.length} bytes)`,
      );
  }

  return commands;
}

/**
 * The answer holds each field as sent (null in a merge patch removes it);
 * a field not sent that the request schema gives a `default` holds that.
 */
function checkFieldsSent(what: string, answer: Resource, sent: Resource, requestSchema?: Schema): void {
  for (const [name, value] of Object.entries(sent))
    if (value !== null) compare(`${what}: ${name}`, answer[name], value);
  const properties = (requestSchema?.['properties'] ?? {}) as Record<string, Schema>;
  for (const [name, property] of Object.entries(properties))
    if (!(name in sent) && 'default' in property)
      compare(`${what}: ${name} (default)`, answer[name], property['default']);
}

/** A fresh model: the store as far as a new sequence knows it. */
export const emptyModel = (): Model => ({ kinds: new Map(), keys: [], cursors: new Map() });
