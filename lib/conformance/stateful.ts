import fc from 'fast-check';
import type { TestRequest } from './checks.js';

/**
 * Stateful sequences driven by a model of the store (issue 28): random
 * sequences of create, replay with the same Idempotency-Key, list by id
 * (with status, limit and an issued cursor), page by Link rel="next", get
 * and conditional GET, each answer compared with what the model says it
 * must be. Every answer is also checked against the schema by the
 * transport (the conformance client, or npm run verify's exchanger).
 *
 * The model knows the pets this sequence created or saw. When the store is
 * the sequence's own (a test's fresh table: `exclusive`), it is exactly
 * those pets and every listing is compared whole; against a deployment,
 * listings are compared on the pets the model knows, and ids no pet can
 * have stand for missing ones.
 */

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

export interface NewPet {
  name: string;
  categoryId: number;
  status?: string;
}

/** An answer as the transport saw it; its contract problems (schema, headers) are the transport's to report. */
export interface Observed {
  status: number;
  headers: Headers;
  text: string;
  json?: unknown;
  problems: string[];
}

export interface StatefulTransport {
  /** Sends the request (to `url`, a Link target, when given); undefined when the transport's budget is spent. */
  send(request: TestRequest, url?: string): Promise<Observed | undefined>;
}

export interface StatefulOptions {
  authorization: string;
  /** The API's base path (/v1), which Location and Link targets start with. */
  basePath: string;
  /** The store holds exactly what the sequence created (a fresh table). */
  exclusive: boolean;
  /** No request that writes (npm run verify --read-only). */
  readOnly: boolean;
  /** Operations not to call (past their sunset). */
  retired: ReadonlySet<string>;
  /** Makes each Idempotency-Key unique to its run (keys live 24 hours, runs share them otherwise). */
  keyPrefix: string;
  /** Valid createPet bodies (from the spec's generators). */
  newPets: fc.Arbitrary<NewPet>;
  /** Names written on a deployment start with this, so that its data says where it came from. */
  namePrefix?: string;
  /** The most pages a walk reads on a store that is not the sequence's own. */
  maxPages?: number;
}

/** A model answer that differs from the service's. */
export class ModelMismatch extends Error {}

interface Model {
  /** Pets that exist, by id: created or seen by this sequence. */
  pets: Map<number, Pet>;
  /** Idempotency-Keys sent, with the body sent and the pet answered. */
  keys: Array<{ key: string; body: string; pet: Pet }>;
  /** Cursors the service issued, with the id each page ended at. */
  cursors: Array<{ cursor: string; afterId: number }>;
}

/** Ids no pet can have (the service assigns 1 to 2^53 - 1): missing whatever the store holds. */
const missingIds = ['0', '-7', '9007199254740993', '9223372036854775807'];
const statuses = [undefined, 'available', 'pending', 'sold'] as const;

type Command = fc.AsyncCommand<Model, StatefulTransport>;

function expectStatus(what: string, answer: Observed | undefined, status: number): answer is Observed {
  if (answer === undefined) return false;
  if (answer.problems.length > 0)
    throw new ModelMismatch(`${what}: the answer breaks the contract: ${answer.problems.join('; ')}`);
  if (answer.status !== status)
    throw new ModelMismatch(`${what}: expected ${status}, got ${answer.status} ${answer.text.slice(0, 300)}`);
  return true;
}

/** The JSON body of an answer that must have one. */
function bodyOf(what: string, answer: Observed): unknown {
  if (answer.json === undefined) throw new ModelMismatch(`${what}: no JSON body: ${answer.text.slice(0, 200)}`);
  return answer.json;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function compare(what: string, got: unknown, expected: unknown): void {
  if (!same(got, expected))
    throw new ModelMismatch(`${what}: got ${JSON.stringify(got)}, the model says ${JSON.stringify(expected)}`);
}

const nextLinkOf = (answer: Observed) => /<([^>]+)>\s*;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1];
const cursorOf = (link: string) => new URLSearchParams(link.split('?')[1] ?? '').get('cursor') ?? undefined;

/** Builds the commands of one option set; `counter` makes keys unique across the sequences of a run. */
export function statefulCommands(options: StatefulOptions): Array<fc.Arbitrary<Command>> {
  const auth = { authorization: options.authorization };
  const request = (operationId: string, intent: string, parts: Partial<TestRequest>): TestRequest => ({
    operationId,
    intent,
    pathParams: {},
    query: [],
    headers: auth,
    ...parts,
  });
  let keyCounter = 0;
  const named = (pet: NewPet): NewPet =>
    options.namePrefix ? { ...pet, name: [...`${options.namePrefix} ${pet.name}`].slice(0, 100).join('') } : pet;

  class Create implements Command {
    constructor(
      readonly pet: NewPet,
      readonly withKey: boolean,
    ) {}
    check = () => !options.readOnly;
    async run(model: Model, real: StatefulTransport) {
      const body = JSON.stringify(named(this.pet));
      const key = this.withKey ? `${options.keyPrefix}-${(keyCounter += 1)}` : undefined;
      const headers = { ...auth, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) };
      const answer = await real.send(request('createPet', 'create', { headers, body }));
      if (!expectStatus('createPet', answer, 201)) return;
      const pet = bodyOf('createPet', answer) as Pet;
      const sent = JSON.parse(body) as NewPet;
      compare('createPet body', pet, {
        id: pet.id,
        name: sent.name,
        categoryId: sent.categoryId,
        status: sent.status ?? 'available',
      });
      if (model.pets.has(pet.id)) throw new ModelMismatch(`createPet answered id ${pet.id}, which exists already`);
      const highest = Math.max(0, ...model.pets.keys());
      if (options.exclusive && pet.id <= highest)
        throw new ModelMismatch(`createPet answered id ${pet.id}, not above the highest id ${highest}`);
      compare('Location', answer.headers.get('location'), `${options.basePath}/pets/${pet.id}`);
      if (answer.headers.get('idempotent-replayed') !== null)
        throw new ModelMismatch('a first create carries Idempotent-Replayed');
      model.pets.set(pet.id, pet);
      if (key) model.keys.push({ key, body, pet });
    }
    toString = () => `create(${JSON.stringify(this.pet)}${this.withKey ? ', with a key' : ''})`;
  }

  class Replay implements Command {
    constructor(
      readonly pick: number,
      readonly sameBody: boolean,
    ) {}
    check = (model: Readonly<Model>) => !options.readOnly && model.keys.length > 0;
    async run(model: Model, real: StatefulTransport) {
      const used = model.keys[this.pick % model.keys.length]!;
      const other = { ...(JSON.parse(used.body) as NewPet) };
      other.categoryId = other.categoryId === 1 ? 2 : 1;
      const body = this.sameBody ? used.body : JSON.stringify(other);
      const headers = { ...auth, 'content-type': 'application/json', 'idempotency-key': used.key };
      const answer = await real.send(request('createPet', 'replay', { headers, body }));
      if (this.sameBody) {
        if (!expectStatus('replay, same body', answer, 201)) return;
        compare('replay body', answer.json, used.pet);
        compare('replay Idempotent-Replayed', answer.headers.get('idempotent-replayed'), 'true');
      } else if (expectStatus('replay, another body', answer, 422)) {
        compare('replay code', (answer.json as { code?: string } | undefined)?.code, 'idempotency_key_reused');
      }
    }
    toString = () => `replay(${this.pick}, ${this.sameBody ? 'same body' : 'another body'})`;
  }

  class ListById implements Command {
    constructor(
      readonly picks: number[],
      readonly missing: number,
      readonly status: string | undefined,
      readonly limit: number | undefined,
      readonly cursorPick: number | undefined,
    ) {}
    check = () => true;
    async run(model: Model, real: StatefulTransport) {
      const known = [...model.pets.keys()];
      const ids = known.length === 0 ? [] : this.picks.map((pick) => known[pick % known.length]!);
      const asked = [...ids.map(String), ...missingIds.slice(0, this.missing)];
      if (asked.length === 0) asked.push(missingIds[0]!);
      const cursor =
        this.cursorPick === undefined || model.cursors.length === 0
          ? undefined
          : model.cursors[this.cursorPick % model.cursors.length];
      const query: Array<[string, string]> = asked.map((id) => ['id', id]);
      if (this.status) query.push(['status', this.status]);
      if (this.limit !== undefined) query.push(['limit', String(this.limit)]);
      if (cursor) query.push(['cursor', cursor.cursor]);
      const answer = await real.send(request('listPets', 'list by id', { query }));
      if (!expectStatus(`listPets ?${new URLSearchParams(query).toString()}`, answer, 200)) return;
      const expected = [...new Set(ids)]
        .sort((a, b) => a - b)
        .map((id) => model.pets.get(id)!)
        .filter((pet) => !this.status || pet.status === this.status)
        .filter((pet) => !cursor || pet.id > cursor.afterId)
        .slice(0, this.limit ?? 100);
      compare(`listPets ?${new URLSearchParams(query).toString()}`, answer.json, expected);
      if (answer.headers.get('link') !== null) throw new ModelMismatch('an id lookup carries a Link');
    }
    toString = () =>
      `listById(${JSON.stringify({ picks: this.picks, missing: this.missing, status: this.status, limit: this.limit, cursor: this.cursorPick })})`;
  }

  class Walk implements Command {
    constructor(
      readonly status: string | undefined,
      readonly limit: number,
    ) {}
    check = () => true;
    async run(model: Model, real: StatefulTransport) {
      const query: Array<[string, string]> = [['limit', String(this.limit)]];
      if (this.status) query.push(['status', this.status]);
      const first = request('listPets', `walk limit=${this.limit} status=${this.status}`, { query });
      const seen: Pet[] = [];
      let url: string | undefined;
      const maxPages = options.exclusive ? Infinity : (options.maxPages ?? 5);
      let pages = 0;
      for (; pages < maxPages; pages += 1) {
        const answer = await real.send(first, url);
        if (!expectStatus(`walk page ${pages + 1}`, answer, 200)) return;
        const pets = bodyOf(`walk page ${pages + 1}`, answer) as Pet[];
        if (pets.length > this.limit) throw new ModelMismatch(`a page of ${pets.length} for limit ${this.limit}`);
        for (const pet of pets) {
          if (pet.id <= (seen.at(-1)?.id ?? 0))
            throw new ModelMismatch(`ids not rising: ${pet.id} after ${seen.at(-1)?.id}`);
          if (this.status && pet.status !== this.status)
            throw new ModelMismatch(`status ${pet.status} in a ${this.status} walk`);
          const modelled = model.pets.get(pet.id);
          if (modelled) compare(`walk, pet ${pet.id}`, pet, modelled);
          else if (options.exclusive) throw new ModelMismatch(`walk lists pet ${pet.id}, which the model lacks`);
          else model.pets.set(pet.id, pet);
          seen.push(pet);
        }
        const next = nextLinkOf(answer);
        if (next === undefined) break;
        if (pets.length < this.limit) throw new ModelMismatch(`a short page (${pets.length}) links to a next page`);
        const cursor = cursorOf(next);
        if (cursor && seen.length > 0) model.cursors.push({ cursor, afterId: seen.at(-1)!.id });
        url = next;
      }
      if (pages >= maxPages) return;
      const expected = [...model.pets.values()]
        .filter((pet) => !this.status || pet.status === this.status)
        .sort((a, b) => a.id - b.id);
      if (options.exclusive) compare(`walk limit=${this.limit} status=${this.status}`, seen, expected);
      else {
        const listed = new Set(seen.map((pet) => pet.id));
        const absent = expected.filter((pet) => !listed.has(pet.id)).map((pet) => pet.id);
        if (absent.length > 0) throw new ModelMismatch(`a whole walk misses known pets ${absent.join(', ')}`);
      }
    }
    toString = () => `walk(status=${this.status}, limit=${this.limit})`;
  }

  class Get implements Command {
    constructor(
      readonly pick: number | undefined,
      readonly conditional: boolean,
    ) {}
    check = () => !options.retired.has('getPet');
    async run(model: Model, real: StatefulTransport) {
      const known = [...model.pets.keys()];
      const id = this.pick === undefined || known.length === 0 ? undefined : known[this.pick % known.length];
      const petId = id === undefined ? missingIds[(this.pick ?? 0) % missingIds.length]! : String(id);
      const get = request('getPet', 'get', { pathParams: { petId } });
      const answer = await real.send(get);
      if (id === undefined) {
        if (expectStatus(`getPet ${petId}`, answer, 404))
          compare('getPet code', (answer.json as { code?: string } | undefined)?.code, 'not_found');
        return;
      }
      if (!expectStatus(`getPet ${petId}`, answer, 200)) return;
      compare(`getPet ${petId}`, answer.json, model.pets.get(id));
      if (this.conditional) await revalidate(real, get, answer);
    }
    toString = () => `get(${this.pick ?? 'missing'}${this.conditional ? ', then If-None-Match' : ''})`;
  }

  class ConditionalList implements Command {
    constructor(readonly picks: number[]) {}
    check = (model: Readonly<Model>) => model.pets.size > 0;
    async run(model: Model, real: StatefulTransport) {
      const known = [...model.pets.keys()];
      const query = this.picks.map((pick) => ['id', String(known[pick % known.length])] as [string, string]);
      const list = request('listPets', 'conditional list by id', { query });
      const answer = await real.send(list);
      if (expectStatus('listPets by id', answer, 200)) await revalidate(real, list, answer);
    }
    toString = () => `conditionalList(${JSON.stringify(this.picks)})`;
  }

  /** The same GET with the ETag: 304 with that ETag; with another tag: 200 again. */
  async function revalidate(real: StatefulTransport, sent: TestRequest, first: Observed): Promise<void> {
    const etag = first.headers.get('etag');
    if (etag === null) throw new ModelMismatch(`${sent.operationId}: a 200 without an ETag`);
    const again = await real.send({
      ...sent,
      intent: 'If-None-Match',
      headers: { ...sent.headers, 'if-none-match': etag },
    });
    if (expectStatus(`${sent.operationId} If-None-Match ${etag}`, again, 304)) {
      compare('304 ETag', again.headers.get('etag'), etag);
      if (again.text !== '') throw new ModelMismatch('a 304 with a body');
    }
    const stale = await real.send({
      ...sent,
      intent: 'If-None-Match, another tag',
      headers: { ...sent.headers, 'if-none-match': '"other"' },
    });
    if (expectStatus(`${sent.operationId} If-None-Match "other"`, stale, 200))
      compare('200 after another tag', stale.text, first.text);
  }

  const pick = fc.nat({ max: 1000 });
  const status = fc.constantFrom(...statuses);
  // Small limits most of the time, so that pages and id lookups are cut.
  const smallOrAnyLimit = fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 4 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 100 }) },
  );
  return [
    fc.tuple(options.newPets, fc.boolean()).map(([pet, withKey]) => new Create(pet, withKey)),
    fc.tuple(pick, fc.boolean()).map(([which, sameBody]) => new Replay(which, sameBody)),
    fc
      .record({
        picks: fc.array(pick, { maxLength: 8 }),
        missing: fc.integer({ min: 0, max: 2 }),
        status,
        limit: fc.option(smallOrAnyLimit, { nil: undefined, freq: 2 }),
        cursor: fc.option(pick, { nil: undefined, freq: 2 }),
      })
      .map(({ picks, missing, status, limit, cursor }) => new ListById(picks, missing, status, limit, cursor)),
    fc.tuple(status, smallOrAnyLimit).map(([walkStatus, limit]) => new Walk(walkStatus, limit)),
    fc
      .tuple(fc.option(pick, { nil: undefined, freq: 5 }), fc.boolean())
      .map(([which, conditional]) => new Get(which, conditional)),
    fc.array(pick, { minLength: 1, maxLength: 4 }).map((picks) => new ConditionalList(picks)),
  ];
}

/** A fresh model: the store as far as a new sequence knows it. */
export const emptyModel = (): Model => ({ pets: new Map(), keys: [], cursors: [] });
