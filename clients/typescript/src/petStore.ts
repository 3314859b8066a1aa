import { DeprecationWatch, resolvedLink, warnOnce, type DeprecationHandler } from './deprecation.js';
import { PetStoreError, errorObjectOf, unexpectedResponse, type OperationId } from './errors.js';
import { exchange, type Answer, type Outgoing, type Transport } from './exchange.js';
import type { components, operations, paths } from './generated/api.js';
import { maxPageSize } from './generated/contract.js';
import { newIdempotencyKey } from './idempotencyKey.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
/** One page of listPets: by status, up to `limit` pets, or the pets with the given ids (not with `limit`). */
export type ListPetsQuery = Pick<NonNullable<operations['listPets']['parameters']['query']>, 'status' | 'limit' | 'id'>;

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

export interface CallOptions {
  /** Cancels the call: it rejects with the signal's reason and is not retried. */
  signal?: AbortSignal;
}

export interface CreatePetOptions extends CallOptions {
  /** Identifies this creation across retries (default: a new random UUID, the same on every retry of this call). */
  idempotencyKey?: string;
}

/** Long enough for a service that is starting or was briefly overloaded; a minute is what a person waits. */
const defaultTimeoutMs = 60_000;
/** Four attempts: with full jitter, about 0.25 + 0.5 + 1 s of waiting on average without Retry-After. */
const defaultMaxRetries = 3;

type Path = keyof paths;

/** A page of pets and the URL of the next one, if any. */
interface Page {
  pets: Pet[];
  next: URL | undefined;
}

/** The pet store service. Every method retries what may be retried, and throws PetStoreError for an error answer. */
export class PetStore {
  readonly #base: URL;
  readonly #transport: Transport;
  readonly #authorization: string;
  readonly #deprecations: DeprecationWatch;

  constructor(options: PetStoreOptions) {
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
   * Adds a pet. Retried (with the same Idempotency-Key on every attempt) after a lost connection or a
   * retryable answer: the service adds it once and answers the retry with the first answer.
   * @throws {PetStoreError<'createPet'>} for an error answer (`PetStoreError.is(error, 'createPet')` narrows it)
   */
  async createPet(pet: NewPet, options: CreatePetOptions = {}): Promise<Pet> {
    const headers = this.#headers({
      'Content-Type': 'application/json',
      'Idempotency-Key': options.idempotencyKey ?? newIdempotencyKey(),
    });
    const outgoing = { method: 'POST', url: this.#url('/pets'), headers, body: JSON.stringify(pet) } as const;
    return this.#json('createPet', await this.#send('createPet', outgoing, options.signal)) as Pet;
  }

  /**
   * One page of pets, in ascending id order (see pets() for all of them).
   * @throws {PetStoreError<'listPets'>}
   */
  async listPets(query: ListPetsQuery = {}, options: CallOptions = {}): Promise<Pet[]> {
    return (await this.#page(this.#listUrl(query), options.signal)).pets;
  }

  /**
   * Every pet (with this status), page after page, following the service's `Link: rel="next"`; a next link
   * to another origin than baseUrl's is refused (PetStoreError `unexpected_response`), so the key goes
   * nowhere else. Each page is one call, with its own deadline and retries.
   * @throws {PetStoreError<'listPets'>}
   */
  async *pets(filter: { status?: PetStatus } = {}, options: CallOptions = {}): AsyncGenerator<Pet, void, undefined> {
    let url: URL | undefined = this.#listUrl({ ...filter, limit: maxPageSize });
    while (url !== undefined) {
      const page: Page = await this.#page(url, options.signal);
      yield* page.pets;
      url = page.next;
    }
  }

  /**
   * One pet by id.
   * @deprecated The service removes getPet at its sunset (Thu, 05 Dec 2030); after it, calls fail with
   * PetStoreError 410 `gone` whose `successor` names the replacement. Use `listPets({ id: [id] })`.
   * @throws {PetStoreError<'getPet'>}
   */
  async getPet(id: number, options: CallOptions = {}): Promise<Pet> {
    const url = this.#url('/pets/{petId}', { petId: String(id) });
    const answer = await this.#send('getPet', { method: 'GET', url, headers: this.#headers() }, options.signal);
    return this.#json('getPet', answer) as Pet;
  }

  #headers(extra: Record<string, string> = {}): Record<string, string> {
    return { Accept: 'application/json', Authorization: this.#authorization, ...extra };
  }

  /** The URL of a path of the contract under baseUrl, its {parameters} filled in. */
  #url(path: Path, parameters: Record<string, string> = {}): URL {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(parameters[name] ?? ''));
    return new URL(filled.slice(1), this.#base);
  }

  #listUrl(query: ListPetsQuery): URL {
    const url = this.#url('/pets');
    if (query.status !== undefined) url.searchParams.set('status', query.status);
    if (query.limit !== undefined) url.searchParams.set('limit', String(query.limit));
    for (const id of query.id ?? []) url.searchParams.append('id', String(id));
    return url;
  }

  async #page(url: URL, signal: AbortSignal | undefined): Promise<Page> {
    const answer = await this.#send('listPets', { method: 'GET', url, headers: this.#headers() }, signal);
    const pets = this.#json('listPets', answer) as Pet[];
    const next = resolvedLink(answer.headers, 'next', this.#base);
    if (next === undefined) return { pets, next: undefined };
    const nextUrl = new URL(next);
    if (nextUrl.origin !== this.#base.origin)
      throw this.#unexpected('listPets', answer, `refused to follow a next page link to another origin: ${next}`);
    return { pets, next: nextUrl };
  }

  /** One call: the answer when it succeeded, else its PetStoreError. */
  async #send(operation: OperationId, outgoing: Outgoing, signal: AbortSignal | undefined): Promise<Answer> {
    const answer = await exchange(this.#transport, outgoing, signal);
    this.#deprecations.observe(operation, answer.headers);
    if (answer.status >= 200 && answer.status < 300) return answer;
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

  #json(operation: OperationId, answer: Answer): unknown {
    try {
      return JSON.parse(answer.text) as unknown;
    } catch {
      throw this.#unexpected(operation, answer, `HTTP ${answer.status} with a body that is not JSON`);
    }
  }

  #unexpected(operation: OperationId, answer: Answer, message: string): PetStoreError {
    const requestId = answer.headers.get('x-request-id') ?? undefined;
    return new PetStoreError(operation, { status: answer.status, code: unexpectedResponse, message, requestId });
  }
}
