import type { Test } from 'tap';
import fc from 'fast-check';
import { buildApp, type AppConfig } from '../../src/app.js';
import { generateApiKey, toStoredKey } from '../../src/auth/keys.js';
import { insertApiKey } from '../../src/db/apiKeys.js';
import type { Database, Queryable } from '../../src/db/index.js';
import { valid } from '../../lib/conformance/arbitraries.js';
import { bodyValues, onTheWire, validCases, type GeneratorContext } from '../../lib/conformance/requests.js';
import { httpLimits } from '../../src/http/limits.js';
import {
  bodyReferences,
  kindAt,
  kindOfItemPath,
  kindOfParameter,
  referencedKind,
  resourceKinds,
  type ResourceKind,
} from '../../lib/conformance/resources.js';
import type { Operation, Schema } from '../../lib/conformance/spec.js';
import { testConfig, testLimits, type TestApp } from '../helpers/app.js';
import { openBackend, type Backend } from '../helpers/databases.js';
import type { ContractClient, TestRequest } from './client.js';

// Each drawn id once in a run: a PUT to an id drawn before would replace (200), not make (201).
let draws = 0;

/**
 * Sets each id of another kind in a drawn body (POST /visits {petId}) to one made for it, as a parent named in
 * the path is: a number when the property's schema says so.
 */
async function referToMade(
  body: unknown,
  operation: Operation,
  client: ContractClient,
  operations: Operation[],
  key: string,
  seed: number,
): Promise<void> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const properties = (operation.body?.schema['properties'] ?? {}) as Record<string, Schema>;
  for (const { name } of bodyReferences(resourceKinds(operations), operation)) {
    const id = await makeResource(client, operations, name, key, seed);
    (body as Record<string, unknown>)[name] = ['integer', 'number'].includes(String(properties[name]?.['type']))
      ? Number(id)
      : id;
  }
}

/**
 * Makes a resource of the kind the path parameter names (in `at.path`, when given: `petId` of
 * /owners/{ownerId}/adoptions/{petId} names an adoption), through the operation the spec says makes one
 * (lib/conformance/resources.ts: a 201 whose links or Location lead to that parameter, or a PUT that
 * declares 201 on its item path), with a valid body generated from its schema, under the parents in
 * `at.pathParams` or made for it; a caller-named id is drawn from its schema, or made when it names a
 * resource of another kind. Returns the id.
 */
export async function makeResource(
  client: ContractClient,
  operations: Operation[],
  parameter: string,
  key: string,
  seed: number,
  at?: { path: string; pathParams: Record<string, string> },
): Promise<string> {
  const kinds = resourceKinds(operations);
  const kind = at === undefined ? kindOfParameter(kinds, parameter) : kindAt(kinds, at.path, parameter);
  if (kind === undefined)
    throw new Error(
      `no operation of openapi.yaml makes what path parameter ${parameter} names: declare a link from its ` +
        "maker's 201 to an operation that takes it (`petId: $response.body#/id`), a Location under its path, " +
        'or a 201 on a PUT to its item path',
    );
  return make(client, operations, kinds, kind, key, seed, at?.pathParams);
}

/**
 * Makes one resource of the kind through its maker (one with a body first: its fields are checked; a PUT may
 * make what its path names with none), under the parents given or made for it. Returns its id (a singleton's:
 * its parents').
 */
async function make(
  client: ContractClient,
  operations: Operation[],
  kinds: ResourceKind[],
  kind: ResourceKind,
  key: string,
  seed: number,
  given: Record<string, string> = {},
): Promise<string> {
  const maker = kind.makers.find((candidate) => candidate.operation.body !== undefined) ?? kind.makers[0]!;
  const pathParams: Record<string, string> = {};
  for (const name of maker.parents)
    pathParams[name] =
      given[name] ??
      (await makeResource(client, operations, name, key, seed, { path: maker.operation.path, pathParams }));
  const clientId = maker.clientId;
  if (clientId !== undefined) {
    const referenced = referencedKind(kinds, maker);
    pathParams[clientId.name] =
      referenced === undefined
        ? String(fc.sample(valid(clientId.schema), { numRuns: 1, seed: seed + (draws += 1) })[0])
        : await makeResource(client, operations, clientId.name, key, seed);
  }
  const declared = maker.operation.body;
  const [body] =
    declared === undefined
      ? []
      : fc.sample(bodyValues(declared, { bodyLimit: httpLimits.bodyLimitBytes }), { numRuns: 1, seed });
  await referToMade(body, maker.operation, client, operations, key, seed);
  const response = await client.send({
    operationId: maker.operation.operationId,
    intent: 'a resource for a stateful step',
    pathParams,
    query: [],
    headers: { authorization: `Bearer ${key}`, ...(declared ? { 'content-type': declared.mediaType } : {}) },
    ...(declared ? { body: onTheWire(declared, body) } : {}),
  });
  const id = maker.idOf(response.json, response.headers.get('location'), pathParams);
  if (response.status !== maker.status || id === undefined)
    throw new Error(`${maker.operation.operationId} for a stateful step answered ${response.status} ${response.text}`);
  return id;
}

/** The success statuses (2xx) an operation declares. */
export const successStatuses = (operation: Operation): number[] =>
  [...operation.responses.keys()].filter((status) => status.startsWith('2')).map(Number);

/**
 * A valid request of the operation that is sure to reach its handler's
 * storage: the required parts only (an optional filter such as listPets' id
 * may name nothing and skip the database), and each path parameter naming a
 * resource made for it just now (makeResource).
 */
export async function existingResourceRequest(
  operation: Operation,
  client: ContractClient,
  context: GeneratorContext,
  seed: number,
  operations: Operation[],
): Promise<TestRequest> {
  const [sample] = fc.sample(validCases(operation, context), { numRuns: 1, seed });
  const required = new Set(operation.parameters.filter((parameter) => parameter.required).map(({ name }) => name));
  const pathParams: Record<string, string> = {};
  // In path order: a parent first, then what is made under it (an owner, then its adoption).
  const inPath = operation.parameters
    .filter((declared) => declared.in === 'path')
    .sort((a, b) => operation.path.indexOf(`{${a.name}}`) - operation.path.indexOf(`{${b.name}}`));
  for (const parameter of inPath)
    pathParams[parameter.name] = await makeResource(client, operations, parameter.name, context.key, seed, {
      path: operation.path,
      pathParams,
    });
  // A resource its parents name (a pet's microchip) is found by its path: made there, under them.
  const kinds = resourceKinds(operations);
  const singleton = kindOfItemPath(kinds, operation.path);
  if (singleton?.makers.some((maker) => maker.singleton))
    await make(client, operations, kinds, singleton, context.key, seed, pathParams);
  const body = typeof sample!.request.body === 'string' ? (JSON.parse(sample!.request.body) as unknown) : undefined;
  await referToMade(body, operation, client, operations, context.key, seed);
  return {
    ...sample!.request,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    intent: 'existing resource, required parts only',
    pathParams,
    query: sample!.request.query.filter(([name]) => required.has(name)),
  };
}

/** The fault hook: a database whose every use fails with the error set, until it is cleared. */
export interface FaultHook {
  /** From now on every query, script and transaction rejects with `fault`; undefined heals it. */
  set(fault: Error | undefined): void;
}

function withFaults(db: Database): { db: Database; hook: FaultHook } {
  let fault: Error | undefined;
  const failing = <T>(run: () => Promise<T>): Promise<T> => (fault ? Promise.reject(fault) : run());
  const wrapped = new Proxy(db, {
    get(target, property) {
      switch (property) {
        case 'query':
          return (...args: Parameters<Queryable['query']>) => failing(() => target.query(...args));
        case 'execScript':
          return (sql: string) => failing(() => target.execScript(sql));
        case 'transaction':
          return <T>(work: (tx: Queryable) => Promise<T>) => failing(() => target.transaction(work));
        case 'replica':
          // While failing, reads go to the primary, which fails.
          return () => (fault ? undefined : target.replica());
        default: {
          const value: unknown = Reflect.get(target, property);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        }
      }
    },
  });
  return { db: wrapped, hook: { set: (next) => (fault = next) } };
}

/**
 * The app on a fresh database behind the fault hook. API keys are trusted
 * for minutes: once a request has passed with the key, authentication needs
 * no database, so a fault set afterwards reaches the handler, whatever the
 * operation (a 500 for a response without a body too).
 */
export async function startFaultableApp(
  t: Test,
  backend: Backend,
  config: Partial<AppConfig> = {},
): Promise<TestApp & { faults: FaultHook }> {
  const opened = await openBackend(backend);
  const key = generateApiKey();
  await insertApiKey(opened.db, toStoredKey('test', key));
  const { db, hook } = withFaults(opened.db);
  const app = await buildApp(
    { ...testConfig, API_KEY_CACHE_SECONDS: 300, ...config },
    { db, logger: false, limits: testLimits },
  );
  t.teardown(async () => {
    await app.close();
    await opened.close();
  });
  return { app, db: opened.db, key, auth: { authorization: `Bearer ${key}` }, faults: hook };
}
