import type { Database } from '../db/index.js';
import type { Precondition } from '../entityTags.js';
import type { operations } from '../generated/api.js';

export type OperationId = keyof operations;
type Operation<K extends OperationId> = operations[K];

type OrEmpty<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>;
/** A JSON media type's name (src/openapi/mediaTypes.ts): application/json or any application/*+json. */
type JsonMediaType = 'application/json' | `application/${string}+json`;
/** The body of whichever JSON media types the request or response declares (undefined without one). */
export type JsonBody<T> = T extends { content: infer Content }
  ? { [Type in keyof Content]: Type extends JsonMediaType ? Content[Type] : never }[keyof Content]
  : undefined;
/** A bytes media type's name (src/openapi/mediaTypes.ts): a photo, a document, a download. */
type BytesMediaType =
  'application/octet-stream' | 'application/pdf' | `image/${string}` | `audio/${string}` | `video/${string}`;
/**
 * The body of whichever media types the request or response declares (undefined without one): a JSON
 * type's schema, or for bytes the bytes as they are (a Buffer is a Uint8Array), whatever the generated
 * type says of them (`string` for `type: string`, `unknown` without a schema).
 */
export type BodyOf<T> = T extends { content: infer Content }
  ? {
      [Type in keyof Content]: Type extends JsonMediaType
        ? Content[Type]
        : Type extends BytesMediaType
          ? Uint8Array
          : never;
    }[keyof Content]
  : undefined;

/** Who sent the request: the API key the HTTP layer accepted (its id, never the key). */
export interface Caller {
  apiKeyId: number;
}

/** What a handler is given: the validated request parts, never the framework's request. */
export type HandlerInput<K extends OperationId> = RequestParts<K> & PreconditionPart<Operation<K>>;

interface RequestParts<K extends OperationId> {
  params: OrEmpty<Operation<K>['parameters']['path']>;
  query: OrEmpty<Operation<K>['parameters']['query']>;
  /** The header parameters the operation declares, under their names in openapi.yaml. */
  headers: OrEmpty<Operation<K>['parameters']['header']>;
  body: BodyOf<NonNullable<Operation<K>['requestBody']>>;
  /** The authenticated caller; undefined only for an operation that requires no API key. */
  caller: Caller | undefined;
}

type SuccessStatus = 200 | 201 | 202 | 203 | 206;

/** What a success of the operation answers: the representation its precondition is checked against. */
type RepresentationOf<Op extends { responses: object }> = Exclude<
  { [S in keyof Op['responses'] & SuccessStatus]: JsonBody<Op['responses'][S]> }[keyof Op['responses'] & SuccessStatus],
  undefined
>;

/**
 * An operation that declares 412 has its If-Match and If-None-Match as
 * `precondition`; a write checks it inside its transaction
 * (`precondition.isMetBy(current)`, src/entityTags.ts) and answers its 412
 * when it fails. A write without a success body (a DELETE's 204) checks the
 * representation its GET answers.
 */
export type PreconditionPart<Op extends { responses: object }> = 412 extends keyof Op['responses']
  ? { precondition: Precondition<[RepresentationOf<Op>] extends [never] ? unknown : RepresentationOf<Op>> }
  : { precondition?: never };

/**
 * Headers the HTTP layer sets on its own (request id, rate limit and its
 * Retry-After, the authentication challenge, the deprecation headers of a
 * deprecated operation, the security headers, the entity tag of a body): a
 * handler never sets them.
 */
type HttpLayerHeader =
  | 'X-Request-Id'
  | 'RateLimit'
  | 'RateLimit-Policy'
  | 'Retry-After'
  | 'WWW-Authenticate'
  | 'Deprecation'
  | 'Sunset'
  | 'X-Content-Type-Options'
  | 'Cache-Control'
  | 'ETag';

/** The declared headers without the generated `[name: string]: unknown` catch-all. */
type Declared<H> = { [Name in keyof H as string extends Name ? never : Name]: H[Name] };

/** On a deprecated operation's response, Link is the deprecation hook's too. */
type OwnHeaders<H> = Omit<H, HttpLayerHeader | ('Deprecation' extends keyof H ? 'Link' : never)>;

// eslint-disable-next-line @typescript-eslint/no-generated-empty-object-type -- no headers at all
type HeadersOf<Response> = Response extends { headers: infer H } ? OwnHeaders<Declared<H>> : Record<never, never>;

/**
 * The headers part of a result: required when the contract requires a
 * header the handler owns (createPet's Location), optional when every one is
 * optional, and absent when there are none. Undeclared headers do not compile.
 */
type HeadersPart<H> = [keyof H] extends [never]
  ? { headers?: never }
  : Record<string, never> extends H
    ? { headers?: H }
    : { headers: H };

/** One object type instead of an intersection, so that excess properties are caught. */
type Flatten<T> = { [Key in keyof T]: T[Key] };

type Responses<K extends OperationId> = Operation<K>['responses'];

/** The body part of a result: absent for a response without content (a 204), required otherwise. */
type BodyPart<Body> = [Body] extends [undefined] ? { body?: undefined } : { body: Body };

/** One of the responses the contract declares for the operation: status, typed body and typed headers. */
export type HandlerResult<K extends OperationId> = {
  [Status in keyof Responses<K>]: Flatten<
    { status: Status } & BodyPart<BodyOf<Responses<K>[Status]>> & HeadersPart<HeadersOf<Responses<K>[Status]>>
  >;
}[keyof Responses<K>];

export type Handler<K extends OperationId> = (input: HandlerInput<K>) => Promise<HandlerResult<K>>;

/** What handlers may use; passed in, never imported, so tests and the server wire the same code. */
export interface HandlerDeps {
  db: Database;
  /** The path the API is served under (/v1), for the links handlers build. */
  basePath: string;
  /** How long an Idempotency-Key is remembered. */
  idempotencyTtlSeconds: number;
  /** Called once per request answered from a stored Idempotency-Key answer, with its operationId (the replay counter). */
  onIdempotentReplay: (operation: OperationId) => void;
}

export type HandlerMap = { [K in OperationId]: Handler<K> };
