import t from 'tap';
import type { operations } from '../../clients/typescript/src/generated/api.js';
import { operationTable } from '../../clients/typescript/src/generated/operations.js';
import {
  PetStore,
  PetStoreError,
  type CallOptions,
  type CreatePetOptions,
  type GetPetOptions,
  type KeyedCallOptions,
  type ListPetsOptions,
  type ListPetsQuery,
  type NewPet,
  type Pet,
  type PetStatus,
} from '../../clients/typescript/src/index.js';
import { isRepeatable, type HttpMethod } from '../../clients/typescript/src/retryPolicy.js';
import { listOperations, loadOpenApiDocument, parametersOf } from '../../src/openapi/document.js';
import { scriptedFetch, unavailable } from '../helpers/typescriptClient.js';

// The client's methods against the contract they are generated from: one per operationId, resolving with
// the operation's 2xx body, keyed options where it declares Idempotency-Key; the public API of before.

// Exact type equality (mutual assignability lets `any` and optional members through).
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T is what makes the check exact
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type SuccessStatus<Op extends keyof operations> = Extract<keyof operations[Op]['responses'], 200 | 201 | 202 | 204>;
/** A response's body as the client reads it (clients/typescript/src/mediaTypes.ts): a JSON type's schema, bytes as a Uint8Array. */
type BodyOf<Response> = Response extends { content: infer Content }
  ? {
      [Type in keyof Content]: Type extends 'application/json' | `application/${string}+json`
        ? Content[Type]
        : Uint8Array;
    }[keyof Content]
  : undefined;
/** What a method resolves with: its 2xx bodies, undefined for one without (a 204). */
type ResultOf<Op extends keyof operations> = BodyOf<operations[Op]['responses'][SuccessStatus<Op>]>;
type HeadersOf<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['header']>;
/** Whether the operation declares the header (an operation without header parameters has `header?: never`). */
type Declares<Op extends keyof operations, Header extends string> = [HeadersOf<Op>] extends [never]
  ? false
  : Header extends keyof HeadersOf<Op>
    ? true
    : false;
/** A header's option name: If-None-Match is ifNoneMatch. */
type Camel<Name extends string> = Name extends `${infer Head}-${infer Tail}`
  ? `${Lowercase<Head>}${Capitalize<Camel<Tail>>}`
  : Lowercase<Name>;
/** Every optional header the operation declares (Idempotency-Key aside), as an option typed by its schema. */
type HeaderOptions<Op extends keyof operations> = {
  [
    Name in keyof HeadersOf<Op> as Name extends 'Idempotency-Key'
      ? never
      : undefined extends HeadersOf<Op>[Name]
        ? Name extends string
          ? Camel<Name>
          : never
        : never
  ]?: HeadersOf<Op>[Name];
};
type BaseOptions<Op extends keyof operations> =
  Declares<Op, 'Idempotency-Key'> extends true ? KeyedCallOptions : CallOptions;
type OptionsOf<Op extends keyof operations> = [keyof HeaderOptions<Op>] extends [never]
  ? BaseOptions<Op>
  : BaseOptions<Op> & HeaderOptions<Op>;

/** For each operationId: whether PetStore has its method, resolving with its 2xx body, its options last. */
type MethodMatches = {
  [Op in keyof operations]: Op extends keyof PetStore
    ? PetStore[Op] extends (...args: infer Args) => infer Result
      ? [Result extends Promise<ResultOf<Op>> ? true : false, Equal<Awaited<Result>, ResultOf<Op>>] extends [true, true]
        ? Required<Args> extends [...unknown[], infer Options]
          ? Equal<Options, OptionsOf<Op>>
          : false
        : false
      : false
    : false;
};
// Fails to compile when an operation of openapi.yaml has no method, or one typed otherwise.
export const everyOperationHasItsMethod: Equal<MethodMatches[keyof operations], true> = true;

/** Whether a method takes exactly these arguments and is still a Promise of exactly this body (withResponse aside). */
type Signature<Method, Args extends unknown[], Body> = Method extends (...args: infer Taken) => infer Returned
  ? [Equal<Taken, Args>, Returned extends Promise<Body> ? true : false, Equal<Awaited<Returned>, Body>] extends [
      true,
      true,
      true,
    ]
    ? true
    : false
  : false;

// The public API as it was before the methods were generated, as signatures.
export const publicApi: [
  Signature<PetStore['createPet'], [body: NewPet, options?: CreatePetOptions], Pet>,
  Signature<PetStore['listPets'], [query?: ListPetsQuery, options?: ListPetsOptions], Pet[]>,
  Signature<PetStore['getPet'], [petId: number, options?: GetPetOptions], Pet>,
  Equal<
    PetStore['pets'],
    (filter?: { status?: PetStatus }, options?: CallOptions) => AsyncGenerator<Pet, void, undefined>
  >,
  Equal<CreatePetOptions, KeyedCallOptions>,
  Equal<Pick<KeyedCallOptions, 'idempotencyKey' | 'signal'>, { idempotencyKey?: string; signal?: AbortSignal }>,
  // Calls written before the header options still compile.
  CallOptions extends GetPetOptions & ListPetsOptions ? true : false,
] = [true, true, true, true, true, true, true];

t.test('the operation table and the methods are the spec operations, by operationId', async (t) => {
  const fromSpec = listOperations(loadOpenApiDocument()).map(({ method, path, operation }) => ({
    id: operation.operationId,
    method,
    path,
  }));
  t.same(
    Object.entries(operationTable).map(([id, { method, path }]) => ({ id, method, path })),
    fromSpec,
  );
  for (const { id } of fromSpec)
    t.equal(typeof (PetStore.prototype as unknown as Record<string, unknown>)[id], 'function', `${id} is a method`);
});

t.test('the retry rule: idempotent methods always, POST and PATCH only under a declared key', async (t) => {
  const methods: HttpMethod[] = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE', 'POST', 'PATCH'];
  t.same(
    methods.filter((method) => isRepeatable(method, false)),
    ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'],
    'without a declared Idempotency-Key (RFC 9110 9.2.2)',
  );
  t.same(
    methods.filter((method) => isRepeatable(method, true)),
    methods,
    'with one',
  );
  t.same(
    Object.entries(operationTable)
      .filter(([, spec]) => spec.idempotencyKey)
      .map(([id]) => id),
    listOperations(loadOpenApiDocument())
      .filter(({ operation }) => JSON.stringify(operation.parameters ?? []).includes('"Idempotency-Key"'))
      .map(({ operation }) => operation.operationId),
    'the table says which operations declare the key',
  );
});

t.test('the existing calls send what they sent before', async (t) => {
  const pet = { id: 7, name: 'Rex', categoryId: 3, status: 'available' } as const;
  const { fetch, requests } = scriptedFetch([unavailable, { status: 200, body: [pet] }]);
  const store = new PetStore({ baseUrl: 'https://pets.test/v1', apiKey: 'k', fetch, onDeprecation: () => undefined });
  t.same(await store.listPets({ status: 'sold', limit: 5, id: [7, 9] }), [pet]);
  t.same(
    requests.map(({ method, url }) => `${method} ${url}`),
    Array(2).fill('GET https://pets.test/v1/pets?limit=5&status=sold&id=7&id=9'),
    'one 503, retried',
  );
  t.equal(requests[0]!.headers.get('authorization'), 'Bearer k');
  t.equal(requests[0]!.headers.get('accept'), 'application/json');

  const created = scriptedFetch([{ status: 201, body: pet }]);
  const creating = new PetStore({ baseUrl: 'https://pets.test/v1/', apiKey: 'k', fetch: created.fetch });
  t.same(await creating.createPet({ name: 'Rex', categoryId: 3 }, { idempotencyKey: 'order-1' }), pet);
  t.match(created.requests[0], {
    method: 'POST',
    url: 'https://pets.test/v1/pets',
    body: '{"name":"Rex","categoryId":3}',
  });
  t.equal(created.requests[0]!.headers.get('idempotency-key'), 'order-1', "the caller's key");
  t.equal(created.requests[0]!.headers.get('content-type'), 'application/json');

  const got = scriptedFetch([{ status: 200, body: pet }]);
  const getting = new PetStore({ baseUrl: 'https://pets.test/v1', apiKey: 'k', fetch: got.fetch });
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the deprecated call keeps working until its sunset
  t.same(await getting.getPet(7), pet);
  t.equal(got.requests[0]!.url, 'https://pets.test/v1/pets/7');
});

t.test('optional header parameters are options: ifNoneMatch is sent, its 304 rejects as not_modified', async (t) => {
  const pet = { id: 7, name: 'Rex', categoryId: 3, status: 'available' } as const;
  const tag = '"3q2-7wEAAJgBAAAAAAAAAA"';
  const { fetch, requests } = scriptedFetch([
    { status: 200, body: pet, headers: { etag: tag } },
    { status: 304, headers: { etag: tag } },
  ]);
  const store = new PetStore({ baseUrl: 'https://pets.test/v1', apiKey: 'k', fetch, onDeprecation: () => undefined });
  const seen: (string | null)[] = [];
  const onHeaders = (headers: Headers) => seen.push(headers.get('etag'));
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- the deprecated call keeps working until its sunset
  t.same(await store.getPet(7, { onHeaders }), pet);
  t.same(seen, [tag], "onHeaders is told the answer's ETag");
  t.equal(requests[0]!.headers.get('if-none-match'), null, 'nothing sent unasked');
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- as above
  const error = await store.getPet(7, { ifNoneMatch: tag, onHeaders }).catch((error: unknown) => error);
  t.equal(requests[1]!.headers.get('if-none-match'), tag, 'ifNoneMatch is sent as If-None-Match');
  t.ok(error instanceof PetStoreError, 'a 304 rejects');
  t.match(error, { status: 304, code: 'not_modified' });
  t.same(seen, [tag], 'onHeaders is told successes only');
  t.same(
    Object.entries(operationTable).flatMap(([id, spec]) =>
      Object.entries((spec as { optionalHeaders?: Record<string, string> }).optionalHeaders ?? {}).map(
        ([option, header]) => `${id} ${option} ${header}`,
      ),
    ),
    listOperations(loadOpenApiDocument()).flatMap(({ operation }) =>
      parametersOf(loadOpenApiDocument(), operation)
        .filter((parameter) => parameter.in === 'header' && parameter.required !== true)
        .filter((parameter) => parameter.name !== 'Idempotency-Key')
        .map(
          (parameter) =>
            // The header's name in camelCase (If-Match: ifMatch), whatever headers the spec declares.
            `${operation.operationId} ${parameter.name
              .split('-')
              .map((word, at) =>
                at === 0 ? word.toLowerCase() : `${word[0]!.toUpperCase()}${word.slice(1).toLowerCase()}`,
              )
              .join('')} ${parameter.name}`,
        ),
    ),
    "every optional header of the spec is an option of its operation's method",
  );
});
