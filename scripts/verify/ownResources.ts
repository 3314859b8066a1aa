import { aimAtOwn } from '../../lib/conformance/requests.js';
import type { TestRequest } from '../../lib/conformance/checks.js';
import {
  bodyReferences,
  isSafe,
  kindAt,
  kindOfItemPath,
  kindOfParameter,
  referencedKind,
  type Maker,
  type ResourceKind,
} from '../../lib/conformance/resources.js';
import { accepts, type Operation, type Parameter, type Schema } from '../../lib/conformance/spec.js';
import type { Answer } from './answer.js';

/**
 * The resources this run made, per kind: the only ones an unsafe request of
 * the run may name (lib/conformance/requests.ts, aimAtOwn).
 */
export class OwnResources {
  private readonly ids = new Map<ResourceKind, string[]>();
  /** The path parameters of each resource the run made with no id of its own (a pet's microchip), by its key. */
  private readonly singletons = new Map<ResourceKind, Map<string, Record<string, string>>>();
  private turn = 0;

  constructor(readonly kinds: ResourceKind[]) {}

  /** Records the id a maker's success answered (or, for a PUT that makes, the id sent in its path). */
  add(
    maker: Maker,
    answer: Pick<Answer, 'json' | 'headers'>,
    pathParams: Record<string, string> = {},
  ): string | undefined {
    const kind = this.kinds.find((candidate) => candidate.makers.includes(maker));
    const id = maker.idOf(answer.json, answer.headers.get('location'), pathParams);
    if (kind === undefined || id === undefined) return undefined;
    const ids = this.ids.get(kind) ?? [];
    if (!ids.includes(id)) ids.push(id);
    this.ids.set(kind, ids);
    if (maker.singleton) {
      const made = this.singletons.get(kind) ?? new Map<string, Record<string, string>>();
      made.set(id, Object.fromEntries(maker.parents.map((name) => [name, pathParams[name] ?? ''])));
      this.singletons.set(kind, made);
    }
    return id;
  }

  /**
   * The path parameters of a resource the run made at this path when its parents alone name one there (PUT
   * /pets/{petId}/microchip), in turn; undefined when the path is no such resource's, or the run made none.
   */
  madeAt(path: string): Record<string, string> | undefined {
    const kind = kindOfItemPath(this.kinds, path);
    const made = [...((kind && this.singletons.get(kind)) ?? new Map<string, Record<string, string>>()).values()];
    if (made.length === 0) return undefined;
    this.turn += 1;
    return made[this.turn % made.length];
  }

  /** Whether the path is one of a resource its parents alone name: found by its path, not by an id. */
  isSingletonPath(path: string): boolean {
    return kindOfItemPath(this.kinds, path)?.makers.some((maker) => maker.singleton) === true;
  }

  /** Records an id the run drew for a PUT that makes (sent without If-None-Match: * when none is declared). */
  claim(maker: Maker, id: string): void {
    this.add(maker, { json: undefined, headers: new Headers() }, { [maker.clientId!.name]: id });
  }

  /**
   * An id of the run for the parameter, in turn; undefined when the run made none of its kind. With the
   * path: the kind whose item path leads to the parameter (an owner's for `ownerId` of its adoptions), or
   * for an id a caller names that refers to another kind (the pet of an adoption), one of that kind.
   */
  pick(parameter: Parameter, path?: string): string | undefined {
    const kind =
      path === undefined ? kindOfParameter(this.kinds, parameter.name) : kindAt(this.kinds, path, parameter.name);
    const referenced = kind?.makers.map((maker) => referencedKind(this.kinds, maker)).find(Boolean);
    const ids = [kind, referenced].flatMap((candidate) => (candidate ? (this.ids.get(candidate) ?? []) : []));
    if (ids.length === 0) return undefined;
    this.turn += 1;
    return ids[this.turn % ids.length];
  }

  /**
   * Whether the run made the resource this value of the parameter names, in a request's path: one of the
   * kind the path names there, or anything under resources the run made (their parents are the run's).
   */
  isOwn(parameter: Parameter, value: string, path?: string, pathParams: Record<string, string> = {}): boolean {
    const kind =
      path === undefined ? kindOfParameter(this.kinds, parameter.name) : kindAt(this.kinds, path, parameter.name);
    if (kind === undefined) return false;
    if ((this.ids.get(kind) ?? []).includes(value)) return true;
    const parents = kind.makers.find((maker) => maker.parents.length > 0)?.parents ?? [];
    return (
      path !== undefined &&
      parents.length > 0 &&
      parents.every((name) => {
        const parentValue = pathParams[name];
        const parentKind = kindAt(this.kinds, path, name);
        return (
          parentValue !== undefined &&
          parentKind !== undefined &&
          (this.ids.get(parentKind) ?? []).includes(parentValue)
        );
      })
    );
  }

  /** The request aimed at the run's own resources, under the unsafe rule; undefined when it cannot be. */
  aim(operation: Operation, request: TestRequest): TestRequest | undefined {
    // On a path that names a resource by its parents alone, one the run made there (a DELETE finds it).
    const made = isSafe(operation) ? undefined : this.madeAt(operation.path);
    const aimed = aimAtOwn(
      operation,
      request,
      (parameter) => made?.[parameter.name] ?? this.pick(parameter, operation.path),
    );
    if (aimed === undefined || isSafe(operation) || typeof aimed.body !== 'string') return aimed;
    const body = this.aimBody(operation, aimed.body);
    return body === undefined ? undefined : { ...aimed, body };
  }

  /**
   * A JSON body with each id of another kind in it (bodyReferences: POST /visits {petId}) set to one the run
   * made, as aimAtOwn does for the path: an unsafe request names only the run's resources, in its body too.
   * Undefined when the run made none of a kind it names, or a value there that its schema refuses could still
   * be read as an id (a number, or text with a digit); other bodies as they are.
   */
  aimBody(operation: Operation, text: string): string | undefined {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return text;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return text;
    const properties = (operation.body?.schema['properties'] ?? {}) as Record<string, Schema>;
    const references = bodyReferences(this.kinds, operation);
    // Nothing to aim: the body as drawn, byte for byte (an oversize body's padding is the point of it).
    if (references.length === 0) return text;
    const aimed: Record<string, unknown> = { ...(body as Record<string, unknown>) };
    for (const { name, kind } of references) {
      const value = aimed[name];
      if (value === undefined) continue;
      const schema = properties[name] ?? {};
      if (!accepts(schema, value)) {
        if (typeof value === 'number' || /\p{Nd}/u.test(String(value))) return undefined;
        continue;
      }
      const ids = this.ids.get(kind) ?? [];
      if (ids.length === 0) return undefined;
      this.turn += 1;
      const id = ids[this.turn % ids.length]!;
      aimed[name] = ['integer', 'number'].includes(String(schema['type'])) ? Number(id) : id;
    }
    // As long as it was drawn, in bytes, with JSON's whitespace: an oversize body stays oversize.
    const out = JSON.stringify(aimed);
    const shortBy = Buffer.byteLength(text) - Buffer.byteLength(out);
    return shortBy > 0 ? `${out}${' '.repeat(shortBy)}` : out;
  }

  /** The maker an operation is, with the status that makes. */
  makerOf(operation: Operation): Maker | undefined {
    return this.kinds.flatMap((kind) => kind.makers).find((maker) => maker.operation === operation);
  }
}
