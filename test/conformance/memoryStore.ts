import { createHash } from 'node:crypto';
import type { TestRequest } from '../../lib/conformance/checks.js';
import type { Observed, StatefulTransport } from '../../lib/conformance/stateful.js';

/**
 * What the in-memory stores of the conformance fixtures share (./ownersFixture.ts, ./singletonFixture.ts):
 * answers, entity tags and conditional reads, the pets they are made under, and the transport that records
 * each (operationId, status) answered. Each fixture adds the operations of its own resource.
 */

/** A strong entity tag of a JSON value. */
export const tagOf = (value: unknown): string =>
  `"${createHash('sha1').update(JSON.stringify(value)).digest('base64url')}"`;

/** An answer with a JSON body (none when undefined) and headers. */
export const answer = (status: number, json?: unknown, headers: Record<string, string> = {}): Observed => ({
  status,
  headers: new Headers(headers),
  text: json === undefined ? '' : JSON.stringify(json),
  ...(json === undefined ? {} : { json }),
  problems: [],
});

export const notFound = (): Observed => answer(404, { code: 'not_found' });

/** A GET of a value: 304 when If-None-Match names its tag, else 200; ETag on both. */
export function conditionalRead(request: TestRequest, value: unknown): Observed {
  const tag = tagOf(value);
  return request.headers['if-none-match'] === tag
    ? answer(304, undefined, { etag: tag })
    : answer(200, value, { etag: tag });
}

/**
 * The 412 of a PUT that creates or replaces (RFC 9110 13.1.1, 13.1.2): If-Match names no current
 * representation's tag, or If-None-Match: * where one exists.
 */
export function failedPrecondition(request: TestRequest, current: unknown): Observed | undefined {
  const ifMatch = request.headers['if-match'];
  if (ifMatch !== undefined && (current === undefined || ifMatch !== tagOf(current)))
    return answer(412, { code: 'precondition_failed' });
  if (request.headers['if-none-match'] === '*' && current !== undefined)
    return answer(412, { code: 'precondition_failed' });
  return undefined;
}

/** The pets a fixture's resources are made under: createPet (with Idempotency-Key), getPet and deletePet. */
export class MemoryPets {
  private pets = new Map<string, object>();
  private keys = new Map<string, { body: string; answer: Observed }>();
  private nextId = 1;

  has(petId: string): boolean {
    return this.pets.has(petId);
  }

  /** Whether an id was never given out. */
  neverMade(petId: string): boolean {
    return Number(petId) >= this.nextId;
  }

  /** The answer of a pet operation, or undefined for another operation. */
  handle(request: TestRequest, onDelete: (petId: string) => void = () => {}): Observed | undefined {
    const petId = request.pathParams['petId']!;
    switch (request.operationId) {
      case 'createPet':
        return this.create(request);
      case 'getPet': {
        const pet = this.pets.get(petId);
        return pet ? conditionalRead(request, pet) : notFound();
      }
      case 'deletePet':
        if (!this.pets.delete(petId)) return notFound();
        onDelete(petId);
        return answer(204);
      default:
        return undefined;
    }
  }

  private create(request: TestRequest): Observed {
    const key = request.headers['idempotency-key'];
    const stored = key === undefined ? undefined : this.keys.get(key);
    if (stored && stored.body !== request.body) return answer(422, { code: 'idempotency_key_reused' });
    if (stored) return { ...stored.answer, headers: new Headers({ 'idempotent-replayed': 'true' }) };
    const pet = { id: this.nextId++, status: 'available', ...(JSON.parse(String(request.body)) as object) };
    this.pets.set(String(pet.id), pet);
    const made = answer(201, pet, { location: `/v1/pets/${pet.id}` });
    if (key !== undefined) this.keys.set(key, { body: String(request.body), answer: made });
    return made;
  }
}

export type RecordingStore = StatefulTransport & { seen: Set<string>; sent: TestRequest[]; reset(): void };

/**
 * A transport over a handler: it keeps each request sent and each (operationId, status) answered (with
 * " If-Match" when the request carried one). A body that is not JSON (an invalid request the tools send on
 * purpose) is a 400.
 */
export function recordingStore(handle: (request: TestRequest) => Observed, reset: () => void): RecordingStore {
  const seen = new Set<string>();
  const sent: TestRequest[] = [];
  return {
    seen,
    sent,
    reset,
    send(request) {
      sent.push(request);
      let got: Observed;
      try {
        got = handle(request);
      } catch {
        got = answer(400, { code: 'bad_request' });
      }
      seen.add(`${request.operationId} ${got.status}`);
      if (request.headers['if-match'] !== undefined) seen.add(`${request.operationId} ${got.status} If-Match`);
      return Promise.resolve(got);
    },
  };
}
