// How two schemas of the same place differ, for a client. Requests are closed: every value the base
// accepted must still be accepted. Responses may grow: every value the head can send must have been
// possible before, except fields a client does not know yet, which it ignores (docs/contract.md).
import { isObject, same, type Json, type JsonObject } from '../openapi/dereference.js';
import type { Change, CounterExample, Level, OperationRef } from './change.js';
import { compareAdmitted, holds, opened, showable, valueAt, type Finding } from './admitted.js';
import { byRule, sameAlone, sameValues, schemaSentence, type Focus } from './consumer.js';
import { lessThan } from '../openapi/refSiblings.js';
import { objectShape } from './objectShape.js';
import { reviewedPatternChange } from './reviewed.js';
import { example, literal, pointerStep } from './text.js';

export interface SchemaPlace {
  direction: 'request' | 'response';
  /** The rule prefix of this node: request-parameter, request-body, response-body, response-header, *-property. */
  prefix: string;
  /** Where, for people: "query parameter `limit`", "request body `application/json`.name". */
  where: string;
  pointer: string;
  basePointer: string;
  operation?: OperationRef;
  /** Where this node's values sit in the place's value: property names, `*` for any item or property. */
  instancePath?: string[];
}

type Emit = (change: Change) => void;

const withConsumer = (change: Change, place: SchemaPlace, focus?: Focus): Change => ({
  ...change,
  consumer: schemaSentence(change, place.direction, focus),
});

/**
 * What the comparison by values needs to know of a change a rule made: where in the value it is, and whether it is
 * a claim about which values are admitted (a bound, a type, required) that the values then confirm or refute.
 */
interface Claim {
  path: string[];
  valueSet: boolean;
  /** The one keyword the rule is about (a bound, a pattern): only a value that keyword refuses shows it. */
  keyword?: string;
}
const claims = new WeakMap<Change, Claim>();

/** The level of a change by whether the head accepts fewer values (tighter) or more (looser). */
const tighter = (place: SchemaPlace): Level => (place.direction === 'request' ? 'breaking' : 'none');
const looser = (place: SchemaPlace): Level => (place.direction === 'request' ? 'additive' : 'breaking');

const lowerBounds: Record<string, string> = {
  minimum: 'min',
  exclusiveMinimum: 'exclusive-min',
  minLength: 'min-length',
  minItems: 'min-items',
  minProperties: 'min-properties',
};
const upperBounds: Record<string, string> = {
  maximum: 'max',
  exclusiveMaximum: 'exclusive-max',
  maxLength: 'max-length',
  maxItems: 'max-items',
  maxProperties: 'max-properties',
};
/** A bound as written: a number, or an int64 too large for a double, kept as its decimal text (load.ts). */
const isBound = (value: Json | undefined): value is number | string =>
  typeof value === 'number' || (typeof value === 'string' && /^-?\d+$/.test(value));
/** Keywords that restrict when present and cannot be compared when both are: any change of value is breaking. */
const restrictions: Record<string, string> = {
  pattern: 'pattern',
  format: 'format',
  multipleOf: 'multiple-of',
  const: 'const',
  uniqueItems: 'unique-items',
};
const composition = ['allOf', 'oneOf', 'anyOf', 'not', 'if', 'then', 'else', 'discriminator'];
/** What says nothing a client can be refused for. */
const ignored = new Set([
  'description',
  'title',
  'example',
  'examples',
  '$comment',
  'externalDocs',
  'xml',
  'contentMediaType',
]);
const handled = new Set([
  ...Object.keys(lowerBounds),
  ...Object.keys(upperBounds),
  ...Object.keys(restrictions),
  ...composition,
  'type',
  'enum',
  'default',
  'properties',
  'required',
  'additionalProperties',
  'items',
  '$ref',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

function typesOf(schema: JsonObject): string[] | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((item): item is string => typeof item === 'string');
  return undefined;
}

/** Whether every value of the `inner` types is one of the `outer` types (an integer is a number). */
const within = (inner: string[], outer: string[]) =>
  inner.every((type) => outer.includes(type) || (type === 'integer' && outer.includes('number')));

class SchemaComparison {
  constructor(
    private readonly emit: Emit,
    private readonly place: SchemaPlace,
    private readonly base: JsonObject,
    private readonly head: JsonObject,
  ) {}

  private reviewedReason: string | undefined;
  private reviewedKeywords = new Set<string>();

  private report(
    suffix: string,
    level: Level,
    what: string,
    before: Json | undefined,
    after: Json | undefined,
    keyword?: string,
    valueSet = true,
  ) {
    const { place } = this;
    const reviewed = keyword !== undefined && this.reviewedKeywords.has(keyword) && level === 'breaking';
    const removed = after === undefined;
    this.claim(
      valueSet,
      {
        rule: `${place.prefix}-${suffix}`,
        level: reviewed ? 'warning' : level,
        direction: place.direction,
        ...(place.operation ? { operation: place.operation } : {}),
        pointer: removed ? place.basePointer : place.pointer,
        side: removed ? 'base' : 'head',
        message: `${place.where}: ${what} ${literal(before)} → ${literal(after)}`,
        ...(before !== undefined ? { before } : {}),
        ...(after !== undefined ? { after } : {}),
        ...(reviewed && this.reviewedReason ? { reviewed: this.reviewedReason } : {}),
        consumer: '',
      },
      undefined,
      keyword,
    );
  }

  private claim(valueSet: boolean, change: Change, path = this.place.instancePath ?? [], keyword?: string) {
    claims.set(change, { path, valueSet, ...(keyword === undefined ? {} : { keyword }) });
    this.emit(change);
  }

  run(): void {
    const reviewed = reviewedPatternChange(this.base, this.head);
    if (reviewed) {
      this.reviewedReason = reviewed.reason;
      this.reviewedKeywords = new Set(['pattern', 'minLength', 'maxLength']);
    }
    this.composition();
    this.types();
    this.enums();
    this.bounds();
    this.restrictions();
    this.defaults();
    this.objects();
    this.items();
    this.access();
    this.others();
  }

  /**
   * deprecated, readOnly and writeOnly, by what a client meets: a property a client sends that became readOnly is
   * refused or dropped; one it reads that became writeOnly is no longer sent; a deprecation is a notice.
   */
  private access() {
    const { direction } = this.place;
    const flag = (keyword: string) => [this.base[keyword] === true, this.head[keyword] === true] as const;
    const [wasDeprecated, isDeprecated] = flag('deprecated');
    if (wasDeprecated !== isDeprecated)
      this.report(
        isDeprecated ? 'deprecated' : 'reactivated',
        isDeprecated ? 'warning' : 'none',
        'deprecated',
        this.base['deprecated'],
        this.head['deprecated'],
        undefined,
        false,
      );
    // readOnly matters where a client writes, writeOnly where it reads; the other direction is documentation.
    const keyword = direction === 'request' ? 'readOnly' : 'writeOnly';
    const [was, is] = flag(keyword);
    if (was !== is)
      this.report(
        `${is ? 'became' : 'no-longer'}-${direction === 'request' ? 'read-only' : 'write-only'}`,
        is ? 'breaking' : 'additive',
        keyword,
        this.base[keyword],
        this.head[keyword],
        undefined,
        false,
      );
    const other = direction === 'request' ? 'writeOnly' : 'readOnly';
    if (!same(this.base[other], this.head[other]))
      this.report(
        `${other === 'readOnly' ? 'read-only' : 'write-only'}-changed`,
        'none',
        other,
        this.base[other],
        this.head[other],
        undefined,
        false,
      );
  }

  /** A composition may narrow or widen, whichever the direction: claimed as harm, and the values decide. */
  private composition() {
    for (const keyword of composition) {
      if (same(this.base[keyword], this.head[keyword])) continue;
      this.report('composition-changed', 'breaking', keyword, this.base[keyword], this.head[keyword]);
    }
  }

  private types() {
    const baseTypes = typesOf(this.base);
    const headTypes = typesOf(this.head);
    if (same(baseTypes, headTypes)) return;
    const nonNull = (types: string[] | undefined) => types?.filter((type) => type !== 'null');
    if (baseTypes && headTypes && same(nonNull(baseTypes), nonNull(headTypes))) {
      const nullable = headTypes.includes('null');
      this.report(
        nullable ? 'became-nullable' : 'became-not-nullable',
        nullable ? looser(this.place) : tighter(this.place),
        'type',
        baseTypes,
        headTypes,
      );
      return;
    }
    let level: Level = 'breaking';
    if (!headTypes || (baseTypes && within(baseTypes, headTypes))) level = looser(this.place);
    else if (!baseTypes || within(headTypes, baseTypes)) level = tighter(this.place);
    this.report('type-changed', level, 'type', baseTypes, headTypes);
  }

  private enums() {
    const baseEnum = Array.isArray(this.base['enum']) ? this.base['enum'] : undefined;
    const headEnum = Array.isArray(this.head['enum']) ? this.head['enum'] : undefined;
    if (same(baseEnum, headEnum)) return;
    if (!baseEnum || !headEnum) {
      const added = headEnum !== undefined;
      this.report(
        added ? 'enum-added' : 'enum-removed',
        added ? tighter(this.place) : looser(this.place),
        'enum',
        baseEnum,
        headEnum,
      );
      return;
    }
    const missing = (from: Json[], to: Json[]) => from.filter((value) => !to.some((other) => same(value, other)));
    const added = missing(headEnum, baseEnum);
    const removed = missing(baseEnum, headEnum);
    if (added.length > 0) this.report('enum-value-added', looser(this.place), 'enum values added', [], added);
    if (removed.length > 0) this.report('enum-value-removed', tighter(this.place), 'enum values removed', removed, []);
  }

  private bounds() {
    for (const [bounds, higherIsTighter] of [
      [lowerBounds, true],
      [upperBounds, false],
    ] as const) {
      for (const [keyword, slug] of Object.entries(bounds)) {
        const before = this.base[keyword];
        const after = this.head[keyword];
        if (same(before, after)) continue;
        if (!isBound(after)) {
          this.report(`${slug}-removed`, looser(this.place), keyword, before, after, keyword);
        } else if (!isBound(before)) {
          this.report(`${slug}-set`, tighter(this.place), keyword, before, after, keyword);
        } else {
          const raised = lessThan(before, after);
          const tightened = raised === higherIsTighter;
          this.report(
            `${slug}-${raised ? 'increased' : 'decreased'}`,
            tightened ? tighter(this.place) : looser(this.place),
            keyword,
            before,
            after,
            keyword,
          );
        }
      }
    }
  }

  private restrictions() {
    for (const [keyword, slug] of Object.entries(restrictions)) {
      const before = this.base[keyword];
      const after = this.head[keyword];
      if (same(before, after) || (keyword === 'uniqueItems' && !before && !after)) continue;
      if (before === undefined) this.report(`${slug}-added`, tighter(this.place), keyword, before, after, keyword);
      else if (after === undefined) this.report(`${slug}-removed`, looser(this.place), keyword, before, after, keyword);
      else this.report(`${slug}-changed`, 'breaking', keyword, before, after, keyword);
    }
  }

  /** A default is what the service assumes when a client leaves the value out: changing it changes the answer. */
  private defaults() {
    const before = this.base['default'];
    const after = this.head['default'];
    if (same(before, after)) return;
    const level: Level = this.place.direction === 'request' ? 'breaking' : 'none';
    const suffix = before === undefined ? 'added' : after === undefined ? 'removed' : 'changed';
    this.report(`default-value-${suffix}`, level, 'default', before, after, undefined, false);
  }

  private child(step: string, pointerSteps: string): SchemaPlace {
    const { place } = this;
    return {
      ...place,
      prefix: `${place.direction}-property`,
      where: `${place.where}${step}`,
      instancePath: [...(place.instancePath ?? []), step === '[]' ? '*' : step === '.*' ? '*' : step.slice(1)],
      pointer: `${place.pointer}${pointerSteps}`,
      basePointer: `${place.basePointer}${pointerSteps}`,
    };
  }

  private objects() {
    const { place } = this;
    const baseShape = objectShape(this.base);
    const headShape = objectShape(this.head);
    const names = new Set([...baseShape.properties.keys(), ...headShape.properties.keys()]);
    for (const name of names) {
      const before = baseShape.properties.get(name);
      const after = headShape.properties.get(name);
      const child = this.child(`.${name}`, (after ?? before)!.steps);
      const property = (rule: string, level: Level, what: string, removed = false, valueSet = false) => {
        this.claim(
          valueSet,
          {
            rule,
            level,
            direction: place.direction,
            ...(place.operation ? { operation: place.operation } : {}),
            pointer: removed ? `${place.basePointer}${before!.steps}` : child.pointer,
            side: removed ? 'base' : 'head',
            message: `${child.where}: ${what}`,
            consumer: '',
          },
          child.instancePath,
        );
      };
      if (!before) {
        const isRequired = headShape.required.has(name);
        const kind = isRequired ? 'required' : 'optional';
        if (place.direction === 'request')
          property(
            `new-${kind}-request-property`,
            isRequired ? 'breaking' : 'additive',
            `${kind} property added`,
            false,
            isRequired,
          );
        else property(`response-${kind}-property-added`, 'additive', `${kind} property added`);
        continue;
      }
      if (!after) {
        if (place.direction === 'request') {
          const { closed } = headShape;
          property(
            'request-property-removed',
            closed ? 'breaking' : 'warning',
            closed ? 'property removed (unknown properties are refused)' : 'property removed',
            true,
            closed,
          );
        } else {
          const wasRequired = baseShape.required.has(name);
          const kind = wasRequired ? 'required' : 'optional';
          property(
            `response-${kind}-property-removed`,
            wasRequired ? 'breaking' : 'warning',
            `${kind} property removed`,
            true,
            wasRequired,
          );
        }
        continue;
      }
      const wasRequired = baseShape.required.has(name);
      const isRequired = headShape.required.has(name);
      if (wasRequired !== isRequired) {
        const became = isRequired ? 'required' : 'optional';
        const level: Level =
          place.direction === 'request' ? (isRequired ? 'breaking' : 'additive') : isRequired ? 'none' : 'breaking';
        property(`${place.direction}-property-became-${became}`, level, `became ${became}`, false, true);
      }
      // A property only a branch declares is judged by the values the branches admit (the composition's claim).
      const own = `${pointerStep('properties')}${pointerStep(name)}`;
      if (before.steps === own && after.steps === own) compareSchemas(before.schema, after.schema, child, this.emit);
    }
    // Responses may gain fields whatever additionalProperties says: clients ignore the ones they do not know.
    if (place.direction === 'request') {
      const closedBefore = this.base['additionalProperties'] === false;
      const closedAfter = this.head['additionalProperties'] === false;
      if (closedBefore !== closedAfter)
        this.report(
          closedAfter ? 'additional-properties-disallowed' : 'additional-properties-allowed',
          closedAfter ? 'breaking' : 'additive',
          'additionalProperties',
          this.base['additionalProperties'],
          this.head['additionalProperties'],
        );
    }
    const baseExtra = this.base['additionalProperties'];
    const headExtra = this.head['additionalProperties'];
    if ((isObject(baseExtra) || isObject(headExtra)) && !same(baseExtra, headExtra))
      compareSchemas(
        isObject(baseExtra) ? baseExtra : {},
        isObject(headExtra) ? headExtra : {},
        this.child('.*', pointerStep('additionalProperties')),
        this.emit,
      );
  }

  private items() {
    const before = this.base['items'];
    const after = this.head['items'];
    if (before === undefined && after === undefined) return;
    compareSchemas(before ?? {}, after ?? {}, this.child('[]', pointerStep('items')), this.emit);
  }

  private others() {
    const names = new Set([...Object.keys(this.base), ...Object.keys(this.head)]);
    for (const name of names) {
      if (handled.has(name) || ignored.has(name) || name.startsWith('x-')) continue;
      if (same(this.base[name], this.head[name])) continue;
      this.report('schema-keyword-changed', 'breaking', name, this.base[name], this.head[name]);
    }
  }
}

/** Every change from the base schema to the head schema of one node, as `emit`ted changes (the rules only). */
function compareSchemas(base: Json | undefined, head: Json | undefined, place: SchemaPlace, emit: Emit): void {
  if (same(base, head)) return;
  const asObject = (schema: Json | undefined): JsonObject =>
    isObject(schema) ? schema : schema === false ? { not: {} } : {};
  new SchemaComparison(emit, place, asObject(base), asObject(head)).run();
}

/**
 * Every change from the base schema to the head schema of one place (a parameter, a body, a header): the rules
 * name and explain each change; the values both schemas admit (admitted.ts) decide its level. A rule's claim about
 * which values are admitted stands when a value shows it (that value becomes its counter-example), and falls to
 * `none` when none does (an equivalent rewrite); a value no rule's place explains is reported on its own.
 */
export function judgeSchemas(base: Json | undefined, head: Json | undefined, place: SchemaPlace, emit: Emit): void {
  if (same(base, head)) return;
  const changes: Change[] = [];
  compareSchemas(base, head, { ...place, instancePath: [] }, (change) => changes.push(change));
  const where = `${place.operation ? `${place.operation.operationId} ` : ''}${place.where} #${place.pointer}`;
  const request = place.direction === 'request';
  // A response's client ignores fields it does not know: the base is judged with its objects opened.
  const admitted = compareAdmitted(base, head, where, { base: request ? base : opened(base ?? true), head });
  const harmful = request ? admitted.narrowing : admitted.widening;
  const benign = request ? admitted.widening : admitted.narrowing;
  const explained = new Set<Finding>();
  // A finding shows a claim when it is blamed at the claim's place, by the claim's keyword when it names one: a
  // value below a raised minimum does not show a lowered maximum.
  const blames = (finding: Finding, claim: Claim) =>
    finding.blame.filter(
      (blame, index) =>
        holds(claim.path, blame) &&
        (claim.keyword === undefined ||
          (blame.length === claim.path.length && finding.keywords[index] === claim.keyword)),
    );
  const found = (findings: Finding[], claim: Claim) => findings.find((finding) => blames(finding, claim).length > 0);
  const counterExample = (finding: Finding): CounterExample =>
    request
      ? { value: finding.value, acceptedBy: 'base', refusedBy: 'head' }
      : { value: finding.value, acceptedBy: 'head', refusedBy: 'base' };
  for (const change of changes) {
    const claim = claims.get(change);
    if (!claim?.valueSet) {
      const ignored =
        change.rule === 'request-property-removed' && claim
          ? admitted.accepted.find((value) => valueAt(value, claim.path) !== undefined)
          : undefined;
      emit(
        withConsumer(
          ignored === undefined ? change : { ...change, ignoredExample: { value: ignored, ignoredBy: 'head' } },
          place,
        ),
      );
      continue;
    }
    // A rule that claims the head admits more (requests) or sends less (responses) is shown only by such a value;
    // one that claims harm by a harmful value, else by a benign one.
    const claimsHarm = change.level === 'breaking' || (change.level === 'warning' && change.reviewed !== undefined);
    for (const finding of claimsHarm ? harmful : []) if (blames(finding, claim).length > 0) explained.add(finding);
    const shown = claimsHarm ? found(harmful, claim) : undefined;
    if (shown) {
      const level = change.reviewed ? 'warning' : 'breaking';
      // The part of the value the rule is about: the blamed place, cut to the rule's own path.
      const blame = blames(shown, claim)[0] ?? [];
      const path = blame.slice(0, claim.path.length);
      const part = valueAt(shown.value, path);
      const focus = part === undefined && path.length === 0 ? undefined : { path, value: part };
      emit(withConsumer({ ...change, level, counterExample: counterExample(shown) }, place, focus));
      continue;
    }
    const { reviewed: _reviewed, ...unreviewed } = change;
    const widened = request ? found(benign, claim) : undefined;
    if (widened) {
      // A request the head accepts and the base refused shows the widening, as a refused one shows a narrowing.
      const example: CounterExample = { value: widened.value, acceptedBy: 'head', refusedBy: 'base' };
      emit(withConsumer({ ...unreviewed, level: 'additive', counterExample: example }, place));
      continue;
    }
    if (found(benign, claim)) {
      emit(withConsumer({ ...unreviewed, level: 'none' }, place));
      continue;
    }
    if (!showable(change.rule, change.before, change.after)) {
      emit(withConsumer({ ...change, message: `${change.message} ${byRule}` }, place));
      continue;
    }
    const alone = harmful.length + benign.length > 0 ? sameAlone : sameValues;
    emit(withConsumer({ ...unreviewed, level: 'none', message: `${change.message} ${alone}` }, place));
  }
  const unexplained = harmful.find((finding) => !explained.has(finding));
  if (unexplained)
    emit(
      withConsumer(
        {
          rule: `${place.prefix}-${request ? 'values-refused' : 'values-added'}`,
          level: 'breaking',
          direction: place.direction,
          ...(place.operation ? { operation: place.operation } : {}),
          pointer: place.pointer,
          side: 'head',
          message: `${place.where}: ${request ? 'refuses a value the base accepted' : 'may send a value the base did not allow'} ${example(unexplained.value)}`,
          counterExample: counterExample(unexplained),
          consumer: '',
        },
        place,
      ),
    );
}
