import type { TestRequest } from './checks.js';
import type { Operation, Parameter, Schema } from './spec.js';

/**
 * What the spec says about resources, for the tools that keep a model of the
 * store (the stateful sequences, npm run verify, the conformance steps):
 * which methods change nothing, which operations make a resource and where
 * its id is in their answer, and which parameters name one. Everything here
 * is read from the operations; nothing names an operation.
 */

/** RFC 9110 9.2.1: the methods that ask the server for no change. Every other method is unsafe. */
export const safeMethods: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

export const isSafe = (operation: Pick<Operation, 'method'>): boolean =>
  safeMethods.has(operation.method.toUpperCase());

/**
 * An operation that makes a resource (RFC 9110): a POST to a collection, the
 * server naming what it made (in its answer's body or `Location`), a PUT to
 * an item path declaring 201, the caller naming it by the path's last parameter,
 * or a PUT declaring 201 to a path ending in a literal segment under a parent
 * (PUT /pets/{petId}/microchip): one resource per parent, named by its parents alone.
 */
export interface Maker {
  operation: Operation;
  status: number;
  /** The path parameters before the item's own (`petId` of POST /pets/{petId}/notes): its parents. */
  parents: string[];
  /** A PUT's own path parameter (`ownerId` of PUT /owners/{ownerId}): the caller draws its value from the schema. */
  clientId?: Parameter;
  /** A PUT to a path ending in a literal segment: the resource has no id of its own; its parents name it. */
  singleton?: true;
  /**
   * A 202 (RFC 9110 15.3.3): the request was accepted and is processed later; what its answer names is a status
   * monitor whose state changes without a request. Only its id is known for good, not its representation.
   */
  accepted?: true;
  /** The new resource's id as text: the id the caller sent, or from the body (a link's `$response.body#/...`) or `Location`. */
  idOf(body: unknown, location: string | null, pathParams?: Record<string, string>): string | undefined;
}

/** A kind of resource the API makes, and the parameters that name one. */
export interface ResourceKind {
  makers: Maker[];
  /** Path parameters that name one resource (`petId`). */
  pathParameters: Set<string>;
  /**
   * The path templates of one resource of the kind, exactly (`/pets/{petId}`): the item directly under a
   * POST maker's collection (a link's target or its `Location`), or a PUT maker's own path. A path under
   * one (`/pets/{petId}/notes`) is another resource: what is sent there does not change the item.
   */
  itemPaths: Set<string>;
  /** Array query parameters that look resources up by id (`id`). */
  lookupParameters: Set<string>;
  /** The pointer of the id in the resource's body (`/id`), when a link says it. */
  idPointer?: string;
  /** The resource's schema as its maker answers it. */
  schema?: Schema;
}

/** Follows a JSON pointer (RFC 6901) into a parsed body. */
export function atPointer(body: unknown, pointer: string): unknown {
  if (pointer === '') return body;
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>(
      (value, key) =>
        typeof value === 'object' && value !== null
          ? (value as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')]
          : undefined,
      body,
    );
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const bodyPointer = (expression: string) => /^\$response\.body#(\/.*)?$/.exec(expression)?.[1] ?? undefined;
const pathNames = (operation: Operation) =>
  operation.parameters.filter((parameter) => parameter.in === 'path').map(({ name }) => name);

/** The path parameter an item path ends in (`petId` of /pets/{petId}), if it ends in one. */
export const itemParameterOf = (path: string): string | undefined => /\/\{([^}/]+)\}$/.exec(path)?.[1];

/** A PUT to an item path that declares 201: it creates the resource at the URI the caller names (RFC 9110 9.3.4). */
export function clientIdOf(operation: Operation): Parameter | undefined {
  if (operation.method.toUpperCase() !== 'PUT' || !operation.responses.has('201')) return undefined;
  const name = itemParameterOf(operation.path);
  return operation.parameters.find((parameter) => parameter.in === 'path' && parameter.name === name);
}

/**
 * A PUT declaring 201 to a path whose last segment is literal, under at least one parameter
 * (PUT /pets/{petId}/microchip): it creates or replaces the one resource at that URI (RFC 9110 9.3.4), whose
 * identity is its parents' ids. Without a parameter the URI names a resource no run can call its own.
 */
export const isSingletonMaker = (operation: Operation): boolean =>
  operation.method.toUpperCase() === 'PUT' &&
  operation.responses.has('201') &&
  itemParameterOf(operation.path) === undefined &&
  !operation.path.endsWith('}') &&
  pathNames(operation).length > 0;

/** A PUT that creates what its path names (a caller's id, or a singleton under its parents): it may also replace. */
export const createsAtPath = (operation: Operation): boolean =>
  clientIdOf(operation) !== undefined || isSingletonMaker(operation);

/**
 * The key of a resource made under parents, by the parents' ids in the path's order: the one id when there
 * is one parent, else them all; a singleton's (it has no id of its own) is its parents' alone.
 */
export const keyOfParents = (names: string[], values: Record<string, string>, own?: string): string => {
  const ids = [...names.map((name) => values[name] ?? ''), ...(own === undefined ? [] : [own])];
  return ids.length === 1 ? ids[0]! : JSON.stringify(ids);
};

/**
 * A safe operation whose path's one parameter, its last segment, is the made id (GET /exports/{exportId},
 * linked from the 202 of POST /pets/exports): the item path of what was made, wherever it sits. A status
 * monitor (RFC 9110 15.3.3) need not be under the collection the request was sent to.
 */
const namesAlone = (target: Operation, name: string): boolean =>
  isSafe(target) && itemParameterOf(target.path) === name && pathNames(target).length === 1;

/** What one success response of an unsafe operation says it makes: by its links, its Location, or a PUT's own path. */
function madeBy(
  operation: Operation,
  status: string,
  operations: Operation[],
): Omit<ResourceKind, 'makers'> & {
  maker?: Maker;
} {
  const response = operation.responses.get(status)!;
  const byId = new Map(operations.map((candidate) => [candidate.operationId, candidate]));
  const pathParameters = new Set<string>();
  const lookupParameters = new Set<string>();
  const itemPaths = new Set<string>();
  const clientId = status === '201' ? clientIdOf(operation) : undefined;
  const singleton = status === '201' && isSingletonMaker(operation);
  const parents = pathNames(operation).filter((name) => name !== clientId?.name);
  // The path of one item made: a PUT's own, or one segment under the collection a POST was sent to.
  const isItemPath = (path: string, name: string) =>
    clientId ? path === operation.path && name === clientId.name : path === `${operation.path}/{${name}}`;
  let idPointer: string | undefined;
  if (singleton) {
    // Its parents name it; what its answer links to names them, not it.
    const maker: Maker = {
      operation,
      status: 201,
      parents,
      singleton: true,
      idOf: (_body, _location, pathParams) =>
        pathParams === undefined ? undefined : keyOfParents(parents, pathParams),
    };
    itemPaths.add(operation.path);
    return {
      pathParameters,
      lookupParameters,
      itemPaths,
      maker,
      ...(response.schema ? { schema: response.schema } : {}),
    };
  }
  for (const link of response.links) {
    const target = byId.get(link.operationId);
    for (const [name, expression] of Object.entries(link.parameters)) {
      const pointer = typeof expression === 'string' ? bodyPointer(expression) : undefined;
      const parameter = target?.parameters.find((candidate) => candidate.name === name);
      // A parent's id in a child's answer names the parent, not what was made; a PUT's is its own parameter.
      if (pointer === undefined || parameter === undefined || parents.includes(name)) continue;
      if (clientId !== undefined && name !== clientId.name) continue;
      idPointer = pointer;
      if (parameter.in === 'path') {
        pathParameters.add(name);
        if (isItemPath(target!.path, name) || (clientId === undefined && namesAlone(target!, name)))
          itemPaths.add(target!.path);
      } else if (parameter.in === 'query' && parameter.schema['type'] === 'array') lookupParameters.add(name);
    }
  }
  if (clientId !== undefined) {
    pathParameters.add(clientId.name);
    itemPaths.add(operation.path);
  } else if (response.headers.some((header) => header.name === 'location')) {
    // 201 with Location on a collection: the item path under it names what was made (/pets -> /pets/{petId}).
    const item = new RegExp(`^${escapeRegExp(operation.path)}/\\{([^}/]+)\\}$`);
    for (const other of operations) {
      const name = item.exec(other.path)?.[1];
      if (name === undefined) continue;
      pathParameters.add(name);
      itemPaths.add(other.path);
    }
  }
  if (pathParameters.size + lookupParameters.size === 0) return { pathParameters, lookupParameters, itemPaths };
  const pointer = idPointer;
  const maker: Maker = {
    operation,
    status: Number(status),
    parents,
    ...(clientId ? { clientId } : {}),
    ...(status === '202' ? { accepted: true as const } : {}),
    idOf: (body, location, pathParams) => {
      if (clientId !== undefined) return pathParams?.[clientId.name];
      if (pointer !== undefined) {
        const value = atPointer(body, pointer);
        return typeof value === 'number' || typeof value === 'string' ? String(value) : undefined;
      }
      const last = location?.split('?')[0]?.split('/').at(-1);
      return last ? decodeURIComponent(last) : undefined;
    },
  };
  return {
    pathParameters,
    lookupParameters,
    itemPaths,
    maker,
    ...(pointer === undefined ? {} : { idPointer: pointer }),
    ...(response.schema ? { schema: response.schema } : {}),
  };
}

/**
 * The kinds of resource the spec's operations make: an unsafe operation whose
 * success answer links a value of its body to another operation's parameter,
 * or carries a Location under its own path (a POST to a collection, at any
 * depth: POST /pets/{petId}/notes is made under a pet), or a PUT that declares
 * 201 on an item path (PUT /owners/{ownerId}). A resource is what an item path
 * names: makers of the same item path are one kind (or, without one, of the
 * same lookup parameter).
 */
export function resourceKinds(operations: Operation[]): ResourceKind[] {
  const kinds: ResourceKind[] = [];
  for (const operation of operations) {
    if (isSafe(operation)) continue;
    for (const status of operation.responses.keys()) {
      if (!status.startsWith('2')) continue;
      const made = madeBy(operation, status, operations);
      if (made.maker === undefined) continue;
      const same = kinds.find((kind) =>
        made.itemPaths.size > 0 && kind.itemPaths.size > 0
          ? [...made.itemPaths].some((path) => kind.itemPaths.has(path))
          : [...made.pathParameters, ...made.lookupParameters].some(
              (name) => kind.pathParameters.has(name) || kind.lookupParameters.has(name),
            ),
      );
      if (same) {
        same.makers.push(made.maker);
        for (const name of made.pathParameters) same.pathParameters.add(name);
        for (const name of made.lookupParameters) same.lookupParameters.add(name);
        for (const path of made.itemPaths) same.itemPaths.add(path);
        if (same.idPointer === undefined && made.idPointer !== undefined) same.idPointer = made.idPointer;
        if (same.schema === undefined && made.schema !== undefined) same.schema = made.schema;
        continue;
      }
      const { maker, ...kind } = made;
      kinds.push({ ...kind, makers: [maker] });
    }
  }
  return kinds;
}

/** The kind whose exact item path this is, if any. */
export const kindOfItemPath = (kinds: ResourceKind[], path: string): ResourceKind | undefined =>
  kinds.find((kind) => kind.itemPaths.has(path));

/**
 * The kind a path parameter of a path names: the kind whose item path is the path up to that parameter
 * (`ownerId` of /owners/{ownerId}/adoptions/{petId} names an owner), else the kind of the parameter's name.
 */
export function kindAt(kinds: ResourceKind[], path: string, name: string): ResourceKind | undefined {
  const end = path.indexOf(`{${name}}`);
  const prefix = end < 0 ? undefined : path.slice(0, end + name.length + 2);
  return (prefix === undefined ? undefined : kindOfItemPath(kinds, prefix)) ?? kindOfParameter(kinds, name);
}

/**
 * The kind a PUT maker's own id refers to, when another kind is named by the same parameter (the adoption
 * PUT /owners/{ownerId}/adoptions/{petId} names a pet): ids of that kind are the ones that can succeed.
 */
export function referencedKind(kinds: ResourceKind[], maker: Maker): ResourceKind | undefined {
  const name = maker.clientId?.name;
  return name === undefined
    ? undefined
    : kinds.find((kind) => !kind.makers.includes(maker) && kind.pathParameters.has(name));
}

/**
 * The operations on a resource of the kind, which its maker's answer links to: on its item path or a path
 * under it, every other path parameter naming one of its parents. An operation on another kind's own path is
 * that kind's (a singleton under a pet, PUT /pets/{petId}/microchip): it acts on a resource that the parent's
 * maker did not make, which does not exist until it is made (RFC 9110 15.5.5: a GET of it is a 404).
 */
export function operationsOn(kinds: ResourceKind[], operations: Operation[], kind: ResourceKind): Operation[] {
  const parents = new Set(
    kind.makers.flatMap((maker) => maker.parents.map((name) => kindAt(kinds, maker.operation.path, name))),
  );
  const ofAnother = (path: string) =>
    kinds.some(
      (other) =>
        other !== kind &&
        other.makers.some((maker) => maker.singleton) &&
        [...other.itemPaths].some((item) => path === item || path.startsWith(`${item}/`)),
    );
  return operations.filter((operation) => {
    const named = pathNames(operation).map((name) => kindAt(kinds, operation.path, name));
    return (
      named.includes(kind) && named.every((other) => other === kind || parents.has(other)) && !ofAnother(operation.path)
    );
  });
}

/** The header parameter an operation declares for idempotent retries (`Idempotency-Key`), if any. */
export const idempotencyHeader = (operation: Operation) =>
  operation.parameters.find(
    (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key',
  );

/** The kind a path parameter names, if any. */
export function kindOfParameter(kinds: ResourceKind[], name: string): ResourceKind | undefined {
  const depth = (kind: ResourceKind) => Math.min(...[...kind.itemPaths].map((path) => path.split('{').length));
  // Several kinds named by one parameter (a pet, an owner's adoption of it): the shallowest item is the resource.
  return kinds
    .filter((kind) => kind.pathParameters.has(name) || kind.lookupParameters.has(name))
    .sort((a, b) => depth(a) - depth(b))[0];
}

/**
 * The properties of an operation's body that name a resource of another kind by its id: a property named as
 * that kind's path parameter (`petId` of POST /visits {petId, date}), as a path reuses a kind's parameter to
 * name one (/owners/{ownerId}/adoptions/{petId}). What makes one must send an id of that kind that exists.
 */
export function bodyReferences(
  kinds: ResourceKind[],
  operation: Operation,
): Array<{ name: string; kind: ResourceKind }> {
  const schema = operation.body?.schema;
  if (schema?.['type'] !== 'object') return [];
  return Object.keys((schema['properties'] ?? {}) as Record<string, Schema>).flatMap((name) => {
    const kind = kindOfParameter(kinds, name);
    return kind === undefined || kind.makers.some((maker) => maker.operation === operation) ? [] : [{ name, kind }];
  });
}

/** The operations past their sunset at `now`: tools stop calling them. */
export const retiredAt = (operations: Operation[], now: number): Set<string> =>
  new Set(
    operations
      .filter((operation) => operation.deprecation?.sunset && now >= operation.deprecation.sunset.getTime())
      .map((operation) => operation.operationId),
  );

/** The body's free-text string properties, required first: where a run may write its label. */
function labelCandidates(schema: Schema | undefined): Array<{ name: string; schema: Schema }> {
  if (schema?.['type'] !== 'object') return [];
  const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
  const required = new Set((schema['required'] as string[] | undefined) ?? []);
  return Object.keys(properties)
    .sort((a, b) => Number(required.has(b)) - Number(required.has(a)))
    .filter(
      (name) =>
        properties[name]!['type'] === 'string' &&
        !('enum' in properties[name]!) &&
        !('format' in properties[name]!) &&
        !('const' in properties[name]!),
    )
    .map((name) => ({ name, schema: properties[name]! }));
}

/** The value with the label in front, cut to the property's maxLength; undefined when its schema refuses that. */
function labelledValue(schema: Schema, value: string, prefix: string): string | undefined {
  const text = [...`${prefix} ${value}`].slice(0, Number(schema['maxLength'] ?? 100)).join('');
  const pattern = typeof schema['pattern'] === 'string' ? new RegExp(schema['pattern'], 'u') : undefined;
  const length = [...text].length;
  const fits = length >= Number(schema['minLength'] ?? 0) && (pattern === undefined || pattern.test(text));
  return fits ? text : undefined;
}

/**
 * A valid JSON body with its label property prefixed, so that what a run
 * writes on a deployment says where it came from: the first free-text string
 * whose schema holds the label (a code of digits cannot). Other bodies as they are.
 */
export function labelled(operation: Operation, request: TestRequest, prefix: string): TestRequest {
  const candidates = labelCandidates(operation.body?.schema);
  if (candidates.length === 0 || typeof request.body !== 'string') return request;
  let body: unknown;
  try {
    body = JSON.parse(request.body);
  } catch {
    return request;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return request;
  for (const candidate of candidates) {
    const value = (body as Record<string, unknown>)[candidate.name];
    if (typeof value !== 'string') continue;
    const text = labelledValue(candidate.schema, value, prefix);
    if (text !== undefined) return { ...request, body: JSON.stringify({ ...body, [candidate.name]: text }) };
  }
  return request;
}
