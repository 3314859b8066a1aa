import type { HttpMethod } from './retryPolicy.js';

/** What the client needs to know of one operation of the contract; `npm run generate` writes one per operationId. */
export interface OperationSpec {
  readonly method: HttpMethod;
  /** The path under baseUrl, its parameters in braces: `/pets/{petId}`. */
  readonly path: string;
  /** The query parameters it declares, in the contract's order: only these are sent. */
  readonly query: readonly string[];
  /** The Accept it sends: its 2xx answers' media types, then its errors' (else JSON, the Error object's) at lower q. */
  readonly accept?: string;
  /** The media types its request body may be sent as (mediaTypes.ts has a codec for each), if it takes one. */
  readonly body?: readonly string[];
  /** Whether it declares an `Idempotency-Key` header: then each call sends one, the same on every retry. */
  readonly idempotencyKey: boolean;
  /** The required header parameters the caller gives (`options.headers`), Idempotency-Key aside. */
  readonly headers?: readonly string[];
  /** Its optional header parameters: the call option (camelCase) each is sent from. */
  readonly optionalHeaders?: Readonly<Record<string, string>>;
  /** Whether it declares 304 (an answer to If-None-Match): the call rejects with PetStoreError 304 `not_modified`. */
  readonly notModified?: boolean;
  /** Its 2xx statuses, each with the media types its body may be in (none: no body) and its declared headers. */
  readonly success: Readonly<Record<number, SuccessSpec>>;
}

/** One declared 2xx answer. */
export interface SuccessSpec {
  readonly content?: readonly string[];
  /** Each declared header, under its declared name: the type its value is read as, and whether it is required. */
  readonly headers?: Readonly<Record<string, HeaderSpec>>;
}

export interface HeaderSpec {
  readonly type: 'string' | 'number' | 'boolean';
  readonly required?: boolean;
}

/** Options of every call. */
export interface CallOptions {
  /** Cancels the call: it rejects with the signal's reason and is not retried. */
  signal?: AbortSignal;
  /** Told the headers of each success answer (its `ETag`, to send back as `ifMatch` or `ifNoneMatch`). */
  onHeaders?: (headers: Headers) => void;
}

/** Options of a call to an operation that declares `Idempotency-Key`. */
export interface KeyedCallOptions extends CallOptions {
  /** Identifies this call across retries (default: a new random UUID, the same on every retry of this call). */
  idempotencyKey?: string;
}

/** One call as a generated method hands it to the transport: its parts, by where the contract puts them. */
export interface OperationRequest {
  /** The path parameters by name. */
  readonly path?: Readonly<Record<string, string | number | boolean>>;
  /** The query object: arrays are sent as repeated parameters (form style, exploded). */
  readonly query?: object;
  /** The request body, encoded by its media type's codec (mediaTypes.ts). */
  readonly body?: unknown;
  /**
   * The call's options; an operation's optional headers are options too, named in its table
   * (optionalHeaders); `contentType` picks the body's media type where the operation declares several.
   */
  readonly options: KeyedCallOptions & {
    readonly headers?: Readonly<Record<string, unknown>>;
    readonly contentType?: string;
  };
}
