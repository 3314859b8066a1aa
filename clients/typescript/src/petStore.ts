import { readBody, readHeaders, type Reading } from './answers.js';
import { CallPromise, type Answered } from './callPromise.js';
import { DeprecationWatch, resolvedLink, warnOnce, type DeprecationHandler } from './deprecation.js';
import { PetStoreError, errorObjectOf, notModified, unexpectedResponse, type OperationId } from './errors.js';
import { exchange, type Answer, type Outgoing, type Transport } from './exchange.js';
import { maxPageSize } from './generated/contract.js';
import { PetStoreOperations, operationTable } from './generated/operations.js';
import type { Pet, PetStatus } from './generated/types.js';
import { newIdempotencyKey } from './idempotencyKey.js';
import { codecOf, encode } from './mediaTypes.js';
import type { CallOptions, OperationRequest, OperationSpec } from './operationSpec.js';

export interface PetStoreOptions {
  /** The service's base URL, `servers[0].url` of openapi.yaml: e.g. https://api.petstore.example.com/v1 */
  baseUrl: string;
  /** The API key, sent as `Authorization: Bearer <apiKey>` to baseUrl's origin only. */
  apiKey: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Deadline of each call, retries and their waits included (default 60 000 ms). */
  timeoutMs?: number;
  /** How many times a call may be retried (default 3; 0 turns retries off). */
  maxRetries?: number;
  /** Told once per operation when answers carry Deprecation or Sunset (default: one console.warn). */
  onDeprecation?: DeprecationHandler;
}

/** Long enough for a service that is starting or was briefly overloaded; a minute is what a person waits. */
const defaultTimeoutMs = 60_000;
/** Four attempts: with full jitter, about 0.25 + 0.5 + 1 s of waiting on average without Retry-After. */
const defaultMaxRetries = 3;

/**
 * The pet store service: one method per operation of its contract (generated, PetStoreOperations), each sent
 * by this transport, which retries what may be retried and throws PetStoreError for an error answer.
 */
export class PetStore extends PetStoreOperations {
  readonly #base: URL;
  readonly #transport: Transport;
  readonly #authorization: string;
  readonly #deprecations: DeprecationWatch;

  constructor(options: PetStoreOptions) {
    super();
    const base = new URL(options.baseUrl);
    if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new TypeError('baseUrl must be an http(s) URL');
    this.#base = new URL(base.href.endsWith('/') ? base.href : `${base.href}/`);
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new RangeError('timeoutMs must be a positive number');
    const maxRetries = options.maxRetries ?? defaultMaxRetries;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new RangeError('maxRetries must be a whole number ≥ 0');
    const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#transport = { fetch: fetchImpl, timeoutMs, maxRetries };
    this.#authorization = `Bearer ${options.apiKey}`;
    this.#deprecations = new DeprecationWatch(options.onDeprecation ?? warnOnce, this.#base);
  }

  /**
   * Every pet (with this status), one by one: listPetsPages with the largest page the contract allows.
   * @throws {PetStoreError<'listPets'>}
   */
  async *pets(filter: { status?: PetStatus } = {}, options: CallOptions = {}): AsyncGenerator<Pet, void, undefined> {
    for await (const page of this.listPetsPages({ ...filter, limit: maxPageSize }, options)) yield* page;
  }

  /** Sends the call at once; its promise reads the body, and withResponse() the status and declared headers too. */
  protected override sendOperation(operation: OperationId, request: OperationRequest): CallPromise<Answered> {
    const spec: OperationSpec = operationTable[operation];
    const sent = Promise.resolve()
      .then(() => this.#send(operation, spec, this.#outgoing(spec, request), request.options))
      .then((answer) => ({ answer, data: this.#read(operation, answer, readBody(spec, answer)) }));
    return new CallPromise(
      () => sent.then(({ data }) => data),
      () =>
        sent.then(({ answer, data }) => ({
          status: answer.status,
          data,
          headers: this.#read(operation, answer, readHeaders(spec, answer)),
          response: answer.response,
        })),
    );
  }

  /**
   * A next link to another origin than baseUrl's is refused (PetStoreError `unexpected_response`, before its
   * page is used), so the key goes nowhere else.
   */
  protected override async *walkOperation(
    operation: OperationId,
    request: OperationRequest,
  ): AsyncGenerator<unknown, void, undefined> {
    const spec: OperationSpec = operationTable[operation];
    let outgoing: Outgoing | undefined = this.#outgoing(spec, request);
    while (outgoing !== undefined) {
      const answer = await this.#send(operation, spec, outgoing, request.options);
      const page = this.#read(operation, answer, readBody(spec, answer));
      const next = resolvedLink(answer.headers, 'next', this.#base);
      if (next !== undefined && new URL(next).origin !== this.#base.origin)
        throw this.#unexpected(operation, answer, `refused to follow a next page link to another origin: ${next}`);
      outgoing = next === undefined ? undefined : { ...outgoing, url: new URL(next) };
      yield page;
    }
  }

  /**
   * The request of one call: its URL from the path and query, its headers (Accept from the declared
   * answers), its body encoded by its media type's codec.
   */
  #outgoing(spec: OperationSpec, request: OperationRequest): Outgoing {
    const headers: Record<string, string> = { Authorization: this.#authorization };
    if (spec.accept !== undefined) headers['Accept'] = spec.accept;
    if (spec.idempotencyKey) headers['Idempotency-Key'] = request.options.idempotencyKey ?? newIdempotencyKey();
    for (const name of spec.headers ?? []) {
      const value = request.options.headers?.[name];
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        headers[name] = String(value);
    }
    for (const [option, name] of Object.entries(spec.optionalHeaders ?? {})) {
      const value = (request.options as Readonly<Record<string, unknown>>)[option];
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        headers[name] = String(value);
    }
    const outgoing = {
      method: spec.method,
      declaresIdempotencyKey: spec.idempotencyKey,
      url: this.#url(spec, request),
      headers,
    };
    if (request.body === undefined) return outgoing;
    // The generator gives an operation with several body media types a required contentType option.
    const contentType = request.options.contentType ?? spec.body?.[0] ?? 'application/json';
    headers['Content-Type'] = contentType;
    return { ...outgoing, body: encode(codecOf(contentType) ?? 'json', request.body) };
  }

  /** The URL of a call under baseUrl: the path's {parameters} filled in, the declared query parameters added. */
  #url(spec: OperationSpec, request: OperationRequest): URL {
    const path = spec.path.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent(String(request.path?.[name] ?? '')),
    );
    const url = new URL(path.slice(1), this.#base);
    const query = (request.query ?? {}) as Record<string, unknown>;
    // The contract's query parameters are scalars or arrays of them (the generator refuses others).
    for (const name of spec.query) {
      const value = query[name];
      const values: unknown[] = Array.isArray(value) ? value : [value];
      for (const item of values)
        if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean')
          url.searchParams.append(name, String(item));
    }
    return url;
  }

  /** One call: the answer when it succeeded, else its PetStoreError. */
  async #send(operation: OperationId, spec: OperationSpec, outgoing: Outgoing, options: CallOptions): Promise<Answer> {
    const answer = await exchange(this.#transport, outgoing, options.signal);
    this.#deprecations.observe(operation, answer.headers);
    if (answer.status >= 200 && answer.status < 300) {
      options.onHeaders?.(answer.headers);
      return answer;
    }
    if (answer.status === 304 && spec.notModified === true)
      throw new PetStoreError(operation, {
        status: 304,
        code: notModified,
        message: 'Not modified: the ETag sent in If-None-Match is current.',
        requestId: answer.headers.get('x-request-id') ?? undefined,
      });
    const error = errorObjectOf(answer.text);
    if (error === undefined || error.status !== answer.status)
      throw this.#unexpected(operation, answer, `unexpected answer: HTTP ${answer.status}`);
    const successor = answer.status === 410 ? resolvedLink(answer.headers, 'successor-version', this.#base) : undefined;
    throw new PetStoreError(
      operation,
      { ...error, requestId: answer.headers.get('x-request-id') ?? undefined },
      successor,
    );
  }

  /** What was read of a success, or its PetStoreError `unexpected_response` when it is not what the contract declares. */
  #read<T>(operation: OperationId, answer: Answer, reading: Reading<T>): T {
    if ('unexpected' in reading) throw this.#unexpected(operation, answer, `unexpected answer: ${reading.unexpected}`);
    return reading.value;
  }

  #unexpected(operation: OperationId, answer: Answer, message: string): PetStoreError {
    const requestId = answer.headers.get('x-request-id') ?? undefined;
    return new PetStoreError(operation, { status: answer.status, code: unexpectedResponse, message, requestId });
  }
}
