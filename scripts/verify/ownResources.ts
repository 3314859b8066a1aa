import { aimAtOwn } from '../../lib/conformance/requests.js';
import type { TestRequest } from '../../lib/conformance/checks.js';
import { kindOfParameter, type Maker, type ResourceKind } from '../../lib/conformance/resources.js';
import type { Operation, Parameter } from '../../lib/conformance/spec.js';
import type { Answer } from './answer.js';

/**
 * The resources this run made, per kind: the only ones an unsafe request of
 * the run may name (lib/conformance/requests.ts, aimAtOwn).
 */
export class OwnResources {
  private readonly ids = new Map<ResourceKind, string[]>();
  private turn = 0;

  constructor(readonly kinds: ResourceKind[]) {}

  /** Records the id a maker's success answered. */
  add(maker: Maker, answer: Pick<Answer, 'json' | 'headers'>): string | undefined {
    const kind = this.kinds.find((candidate) => candidate.makers.includes(maker));
    const id = maker.idOf(answer.json, answer.headers.get('location'));
    if (kind === undefined || id === undefined) return undefined;
    const ids = this.ids.get(kind) ?? [];
    if (!ids.includes(id)) ids.push(id);
    this.ids.set(kind, ids);
    return id;
  }

  /** Whether the run made the resource this value of the parameter names. */
  isOwn(parameter: Parameter, value: string): boolean {
    const kind = kindOfParameter(this.kinds, parameter.name);
    return kind !== undefined && (this.ids.get(kind) ?? []).includes(value);
  }

  /** An id of the run for the parameter, in turn; undefined when the run made none of its kind. */
  pick(parameter: Parameter): string | undefined {
    const kind = kindOfParameter(this.kinds, parameter.name);
    const ids = kind === undefined ? [] : (this.ids.get(kind) ?? []);
    if (ids.length === 0) return undefined;
    this.turn += 1;
    return ids[this.turn % ids.length];
  }

  /** The request aimed at the run's own resources, under the unsafe rule; undefined when it cannot be. */
  aim(operation: Operation, request: TestRequest): TestRequest | undefined {
    return aimAtOwn(operation, request, (parameter) => this.pick(parameter));
  }

  /** The maker an operation is, with the status that makes. */
  makerOf(operation: Operation): Maker | undefined {
    return this.kinds.flatMap((kind) => kind.makers).find((maker) => maker.operation === operation);
  }
}
