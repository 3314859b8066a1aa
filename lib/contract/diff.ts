// The one diff of two contracts: every change a client can tell apart, each with a rule id, a level, a direction,
// its operation and a JSON pointer. The verdict, the changelog and the reviewer's report are views of its list.
import { dereference, isObject, same, type Json, type JsonObject } from '../openapi/dereference.js';
import type { Change, DiffOptions, Level } from './change.js';
import { operationsOf, type Operation } from './operations.js';
import { Reporter } from './reporter.js';
import { judgeSchemas } from './schemaDiff.js';
import { compareOperationServers, compareServers } from './serverDiff.js';
import { compareSecurity, compareSecuritySchemes } from './securityDiff.js';
import { ContractInputError } from './load.js';
import { code, literal, pointerStep } from './text.js';
import { essenceOf, isBytesMediaType } from '../../src/openapi/mediaTypes.js';
import { bodyLimitExtension } from '../../src/http/operations/bodyLimit.js';
import { httpLimits } from '../../src/http/limits.js';

export type { Change, CounterExample, DiffOptions, Level, Direction, OperationRef } from './change.js';

const objectAt = (value: Json | undefined): JsonObject => (isObject(value) ? value : {});

const describeParameter = (parameter: JsonObject) =>
  `${String(parameter['in'])} parameter ${code(String(parameter['name']))}`;

/**
 * How a parameter is written on the wire, OpenAPI's defaults filled in (style form for query and cookie, simple for
 * path and header; explode only for form; nothing reserved or empty allowed), so writing a default out is no change.
 */
function serializationOf(parameter: JsonObject): JsonObject {
  const style = parameter['style'] ?? (['query', 'cookie'].includes(String(parameter['in'])) ? 'form' : 'simple');
  return {
    style,
    explode: parameter['explode'] ?? style === 'form',
    allowReserved: parameter['allowReserved'] ?? false,
    allowEmptyValue: parameter['allowEmptyValue'] ?? false,
    content: parameter['content'] ?? null,
  };
}

/** Preconditions a server may ignore on GET and HEAD: without them the client gets the full answer. */
const cachePreconditions = new Set(['if-none-match', 'if-modified-since']);
const ignorablePrecondition = (parameter: JsonObject, method: string) =>
  parameter['in'] === 'header' &&
  cachePreconditions.has(String(parameter['name']).toLowerCase()) &&
  (method === 'GET' || method === 'HEAD');

function compareParameters(base: Operation, head: Operation, out: Reporter) {
  for (const [key, { parameter, pointer }] of head.parameters) {
    const where = describeParameter(parameter);
    const previous = base.parameters.get(key);
    if (!previous) {
      if (parameter['required'] === true)
        out.add('new-required-request-parameter', 'breaking', 'request', `${where}: added, required`, pointer);
      else out.add('new-optional-request-parameter', 'additive', 'request', `${where}: added, optional`, pointer);
      continue;
    }
    const was = previous.parameter['required'] === true;
    const is = parameter['required'] === true;
    if (was !== is)
      out.add(
        `request-parameter-became-${is ? 'required' : 'optional'}`,
        is ? 'breaking' : 'additive',
        'request',
        `${where}: became ${is ? 'required' : 'optional'}`,
        pointer,
      );
    if (previous.parameter['deprecated'] !== parameter['deprecated'])
      out.add(
        parameter['deprecated'] === true ? 'request-parameter-deprecated' : 'request-parameter-reactivated',
        parameter['deprecated'] === true ? 'warning' : 'none',
        'request',
        `${where}: deprecated ${literal(previous.parameter['deprecated'])} → ${literal(parameter['deprecated'])}`,
        pointer,
      );
    const [written, writes] = [serializationOf(previous.parameter), serializationOf(parameter)];
    for (const keyword of Object.keys(writes)) {
      if (same(written[keyword], writes[keyword])) continue;
      out.add(
        'request-parameter-serialization-changed',
        'breaking',
        'request',
        `${where}: ${keyword} ${literal(written[keyword])} → ${literal(writes[keyword])}`,
        pointer,
      );
    }
    judgeSchemas(
      previous.parameter['schema'],
      parameter['schema'],
      {
        direction: 'request',
        prefix: 'request-parameter',
        where,
        pointer: `${pointer}${pointerStep('schema')}`,
        basePointer: `${previous.pointer}${pointerStep('schema')}`,
        ...(out.operation ? { operation: out.operation } : {}),
      },
      out.emit,
    );
  }
  for (const [key, { parameter, pointer }] of base.parameters) {
    if (head.parameters.has(key)) continue;
    // Requests are closed: a parameter the service no longer declares is refused, or ignored and its meaning lost (an
    // Idempotency-Key ignored makes a retry a second creation). The one exception: a precondition a safe request
    // may have ignored (RFC 9110, 13.2.1), which only turns a 304 into the full answer the client also handles.
    const level: Level = ignorablePrecondition(parameter, base.ref.method) ? 'warning' : 'breaking';
    out.add('request-parameter-removed', level, 'request', `${describeParameter(parameter)}: removed`, pointer, 'base');
  }
}

function compareContent(
  base: Json | undefined,
  head: Json | undefined,
  direction: 'request' | 'response',
  where: string,
  pointers: { head: string; base: string },
  out: Reporter,
  selectable = false,
) {
  const baseContent = objectAt(objectAt(base)['content']);
  const headContent = objectAt(objectAt(head)['content']);
  const prefix = direction === 'request' ? 'request-body' : 'response';
  const at = (pointer: string, mediaType: string) => `${pointer}${pointerStep('content')}${pointerStep(mediaType)}`;
  // One media type however written (case, parameters), as the HTTP layer accepts and answers it: a +json type is
  // compared like application/json, its schema on both sides; another type, even another JSON one, is a change.
  const counterpart = (content: JsonObject, mediaType: string) =>
    Object.keys(content).find((key) => essenceOf(key) === essenceOf(mediaType));
  for (const mediaType of Object.keys(headContent)) {
    if (counterpart(baseContent, mediaType) !== undefined) continue;
    // A client reads the body it was written for: a body of another type it did not ask for (Accept) breaks it.
    const unasked = direction === 'response' && Object.keys(baseContent).length > 0 && !selectable;
    out.add(
      `${prefix}-media-type-added`,
      unasked ? 'breaking' : 'additive',
      direction,
      `${where}: media type ${code(mediaType)} added${unasked ? ' (a client that does not ask for it with Accept may get it)' : ''}`,
      at(pointers.head, mediaType),
    );
  }
  for (const [mediaType, media] of Object.entries(baseContent)) {
    const headType = counterpart(headContent, mediaType);
    if (headType === undefined) {
      out.add(
        `${prefix}-media-type-removed`,
        'breaking',
        direction,
        `${where}: media type ${code(mediaType)} removed`,
        at(pointers.base, mediaType),
        'base',
      );
      continue;
    }
    if (isBytesMediaType(mediaType)) {
      compareBytesSchemas(
        media,
        headContent[headType],
        direction,
        `${where} ${code(headType)}`,
        at(pointers.head, headType),
        out,
      );
      continue;
    }
    judgeSchemas(
      objectAt(media)['schema'],
      objectAt(headContent[headType])['schema'],
      {
        direction,
        prefix: direction === 'request' ? 'request-body' : 'response-body',
        where: `${where} ${code(headType)}`,
        pointer: `${at(pointers.head, headType)}${pointerStep('schema')}`,
        basePointer: `${at(pointers.base, mediaType)}${pointerStep('schema')}`,
        ...(out.operation ? { operation: out.operation } : {}),
      },
      out.emit,
    );
  }
}

/**
 * A bytes body (src/openapi/mediaTypes.ts's `bytes`) is read and answered as it is sent, never checked against its
 * schema (`type: string`, `contentMediaType`), so no value of a schema shows a change: a rewritten schema changes
 * nothing for clients (none), and no JSON value is drawn as if the bytes were JSON.
 */
function compareBytesSchemas(
  base: Json | undefined,
  head: Json | undefined,
  direction: 'request' | 'response',
  where: string,
  pointer: string,
  out: Reporter,
) {
  const [before, after] = [objectAt(base)['schema'], objectAt(head)['schema']];
  // contentMediaType names the bytes' type, which the media type already says: as for JSON, it is documentation.
  const said = (schema: Json | undefined) => {
    const { contentMediaType: _named, ...rest } = objectAt(substance(schema));
    return rest;
  };
  if (same(said(before), said(after))) return;
  out.add(
    `${direction === 'request' ? 'request-body' : 'response-body'}-bytes-schema-changed`,
    'none',
    direction,
    `${where}: schema ${literal(before)} → ${literal(after)} (bytes, as sent: no schema checks them)`,
    `${pointer}${pointerStep('schema')}`,
  );
}

/** The most bytes a request body may have: its x-body-limit-bytes, else the server's limit (src/http/limits.ts). */
const bodyLimitOf = (body: JsonObject): number => {
  const declared = body[bodyLimitExtension];
  return typeof declared === 'number' ? declared : httpLimits.bodyLimitBytes;
};

/**
 * A body over its limit is refused with 413 before it is read: a lower limit refuses bodies the base accepted (the
 * smallest, one byte over the new limit, is the counter-example), a higher one accepts bodies it refused.
 */
function compareBodyLimit(before: JsonObject, after: JsonObject, pointer: string, out: Reporter) {
  const [was, is] = [bodyLimitOf(before), bodyLimitOf(after)];
  if (was === is) return;
  const lowered = is < was;
  const written = (body: JsonObject) =>
    body[bodyLimitExtension] === undefined
      ? `none (the server's ${literal(bodyLimitOf(body))})`
      : literal(body[bodyLimitExtension]);
  out.add(
    `request-body-limit-${lowered ? 'decreased' : 'increased'}`,
    lowered ? 'breaking' : 'additive',
    'request',
    `request body: ${code(bodyLimitExtension)} ${written(before)} → ${written(after)}${lowered ? ` (a body of ${is + 1} bytes: accepted by the base, refused by the head)` : ''}`,
    after[bodyLimitExtension] === undefined ? pointer : `${pointer}${pointerStep(bodyLimitExtension)}`,
    'head',
    { before: was, after: is },
  );
}

function compareRequestBody(base: Operation, head: Operation, out: Reporter) {
  const before = base.value['requestBody'];
  const after = head.value['requestBody'];
  const pointer = `${head.pointer}${pointerStep('requestBody')}`;
  const basePointer = `${base.pointer}${pointerStep('requestBody')}`;
  const required = (body: Json | undefined) => objectAt(body)['required'] === true;
  if (!isObject(before) && !isObject(after)) return;
  if (!isObject(before)) {
    const kind = required(after) ? 'required' : 'optional';
    out.add(
      `added-${kind}-request-body`,
      required(after) ? 'breaking' : 'additive',
      'request',
      `request body added, ${kind}`,
      pointer,
    );
    return;
  }
  if (!isObject(after)) {
    out.add('request-body-removed', 'breaking', 'request', 'request body removed', basePointer, 'base');
    return;
  }
  if (required(before) !== required(after))
    out.add(
      `request-body-became-${required(after) ? 'required' : 'optional'}`,
      required(after) ? 'breaking' : 'additive',
      'request',
      `request body became ${required(after) ? 'required' : 'optional'}`,
      pointer,
    );
  compareBodyLimit(before, after, pointer, out);
  compareContent(before, after, 'request', 'request body', { head: pointer, base: basePointer }, out);
}

const isSuccess = (status: string) => /^[123]/.test(status);

/** The request headers a client sends to ask for an answer it would not otherwise get (RFC 9110, RFC 7240). */
const selectedBy: Record<string, string[]> = {
  '304': ['if-none-match', 'if-modified-since'],
  '412': ['if-match', 'if-unmodified-since'],
  '206': ['range'],
  '202': ['prefer'],
};

const declaresHeader = (operation: Operation, names: string[]) =>
  [...operation.parameters.values()].some(
    ({ parameter }) => parameter['in'] === 'header' && names.includes(String(parameter['name']).toLowerCase()),
  );

function compareHeaders(
  base: JsonObject,
  head: JsonObject,
  where: string,
  pointers: { head: string; base: string },
  out: Reporter,
) {
  const byName = (response: JsonObject) =>
    new Map(
      Object.entries(objectAt(response['headers'])).map(([name, header]) => [
        name.toLowerCase(),
        { name, header: objectAt(header) },
      ]),
    );
  const before = byName(base);
  const after = byName(head);
  const at = (pointer: string, name: string) => `${pointer}${pointerStep('headers')}${pointerStep(name)}`;
  for (const [key, { name, header }] of after) {
    const previous = before.get(key);
    const pointer = at(pointers.head, name);
    const label = `${where} header ${code(name)}`;
    if (!previous) {
      out.add('response-header-added', 'additive', 'response', `${label}: added`, pointer);
      continue;
    }
    const was = previous.header['required'] === true;
    const is = header['required'] === true;
    if (was && !is)
      out.add('response-header-became-optional', 'breaking', 'response', `${label}: became optional`, pointer);
    if (!was && is)
      out.add('response-header-became-required', 'none', 'response', `${label}: became required`, pointer);
    judgeSchemas(
      previous.header['schema'],
      header['schema'],
      {
        direction: 'response',
        prefix: 'response-header',
        where: label,
        pointer: `${pointer}${pointerStep('schema')}`,
        basePointer: `${at(pointers.base, previous.name)}${pointerStep('schema')}`,
        ...(out.operation ? { operation: out.operation } : {}),
      },
      out.emit,
    );
  }
  // Removed, required or not: an optional header is one the service sends in some answers, and a client that
  // reads it when present (ETag for If-None-Match) loses it.
  for (const [key, { name, header }] of before)
    if (!after.has(key))
      out.add(
        'response-header-removed',
        'breaking',
        'response',
        `${where} header ${code(name)}: removed (it was ${header['required'] === true ? 'required' : 'optional'})`,
        at(pointers.base, name),
        'base',
      );
}

/**
 * A response's links (OpenAPI Link Objects): a client that follows one (a 201's link to the item's GET) loses
 * it when it is removed or leads elsewhere; a new one is additive.
 */
function compareLinks(
  base: JsonObject,
  head: JsonObject,
  where: string,
  pointers: { head: string; base: string },
  out: Reporter,
) {
  const before = objectAt(base['links']);
  const after = objectAt(head['links']);
  const at = (pointer: string, name: string) => `${pointer}${pointerStep('links')}${pointerStep(name)}`;
  for (const [name, link] of Object.entries(after)) {
    const label = `${where} link ${code(name)}`;
    if (!(name in before))
      out.add('response-link-added', 'additive', 'response', `${label}: added`, at(pointers.head, name));
    else if (!same(substance(before[name]), substance(link)))
      out.add('response-link-changed', 'breaking', 'response', `${label}: leads elsewhere`, at(pointers.head, name));
  }
  for (const name of Object.keys(before))
    if (!(name in after))
      out.add(
        'response-link-removed',
        'breaking',
        'response',
        `${where} link ${code(name)}: removed`,
        at(pointers.base, name),
        'base',
      );
}

function compareResponses(base: Operation, head: Operation, out: Reporter) {
  const before = objectAt(base.value['responses']);
  const after = objectAt(head.value['responses']);
  const at = (operation: Operation, status: string) =>
    `${operation.pointer}${pointerStep('responses')}${pointerStep(status)}`;
  for (const [status, response] of Object.entries(after)) {
    const pointer = at(head, status);
    const kind = isSuccess(status) ? 'success' : 'non-success';
    const previous = before[status];
    if (previous === undefined) {
      // A client handles the successes it was written for; another one (a 202 with no body) it takes for a failure,
      // unless it asked for it with a header (If-None-Match for a 304).
      const asked = declaresHeader(head, selectedBy[status] ?? []);
      const unexpected = isSuccess(status) && !asked;
      out.add(
        `response-${kind}-status-added`,
        unexpected ? 'breaking' : 'additive',
        'response',
        `response ${code(status)} added${unexpected ? ' (a client written for the old answers does not expect it)' : ''}`,
        pointer,
      );
      continue;
    }
    const pointers = { head: pointer, base: at(base, status) };
    compareHeaders(objectAt(previous), objectAt(response), `response ${code(status)}`, pointers, out);
    compareLinks(objectAt(previous), objectAt(response), `response ${code(status)}`, pointers, out);
    compareContent(
      previous,
      response,
      'response',
      `response ${code(status)}`,
      pointers,
      out,
      declaresHeader(head, ['accept']),
    );
  }
  for (const status of Object.keys(before)) {
    if (status in after) continue;
    const success = isSuccess(status);
    out.add(
      `response-${success ? 'success' : 'non-success'}-status-removed`,
      success ? 'breaking' : 'warning',
      'response',
      `response ${code(status)} removed`,
      at(base, status),
      'base',
    );
  }
}

const sunsetOf = (operation: JsonObject) =>
  typeof operation['x-sunset'] === 'string' ? operation['x-sunset'] : undefined;
const deprecationDetails = ['x-deprecated-at', 'x-replacement', 'x-deprecation-docs'];

/** Deprecation and sunset policy: a deprecation names its sunset, and a sunset never comes sooner. */
/** The day the diff is judged on, and its last instant: a sunset up to that instant has passed. */
interface Day {
  today: string;
  lastInstant: number;
}

function compareDeprecation(base: Operation, head: Operation, day: Day, out: Reporter) {
  const was = base.value['deprecated'] === true;
  const is = head.value['deprecated'] === true;
  const sunset = sunsetOf(head.value);
  const previousSunset = sunsetOf(base.value);
  const pointer = `${head.pointer}${pointerStep('deprecated')}`;
  // The sunset passed on the day judged is said by its own breaking change; this one names the sunset and the
  // replacement, so its sentence can tell the client where to move and by when.
  const replacement = (head.value['x-replacement'] as JsonObject | undefined)?.['operationId'];
  if (!was && is) {
    out.add('endpoint-deprecated', 'warning', 'none', `deprecated, sunset ${literal(sunset)}`, pointer, 'head', {
      after: { sunset: sunset ?? null, replacement: typeof replacement === 'string' ? replacement : null },
    });
    if (!sunset)
      out.add('api-deprecated-sunset-missing', 'breaking', 'none', 'deprecated without an x-sunset date', pointer);
  }
  // Past its sunset the service answers 410: a sunset that had not passed for the base, and has on the day judged,
  // turns every call into a failure from the deploy on.
  const passed = (date: string | undefined) => date !== undefined && Date.parse(date) <= day.lastInstant;
  if (is && passed(sunset) && !(was && passed(previousSunset)))
    out.add(
      'api-deprecated-sunset-passed',
      'breaking',
      'none',
      `deprecated with x-sunset ${literal(sunset)}, already past on ${day.today}`,
      `${head.pointer}${pointerStep('x-sunset')}`,
      'head',
      { before: day.today, after: sunset! },
    );
  if (was && !is)
    out.add(
      'endpoint-reactivated',
      'none',
      'none',
      'no longer deprecated',
      `${base.pointer}${pointerStep('deprecated')}`,
      'base',
    );
  const sunsetPointer = `${head.pointer}${pointerStep('x-sunset')}`;
  if (previousSunset !== sunset) {
    const message = `x-sunset ${literal(previousSunset)} → ${literal(sunset)}`;
    if (previousSunset && !sunset) {
      if (is)
        out.add('api-sunset-deleted', 'breaking', 'none', message, `${base.pointer}${pointerStep('x-sunset')}`, 'base');
    } else if (previousSunset && sunset && Date.parse(sunset) < Date.parse(previousSunset))
      out.add('api-sunset-date-changed-too-small', 'breaking', 'none', message, sunsetPointer);
    else if (previousSunset) out.add('api-sunset-date-changed', 'none', 'none', message, sunsetPointer);
    else if (was) out.add('api-sunset-date-changed', 'none', 'none', message, sunsetPointer);
  }
  for (const field of deprecationDetails)
    if (!same(base.value[field], head.value[field]))
      out.add(
        'api-deprecation-details-changed',
        'none',
        'none',
        `${code(field)} ${literal(base.value[field])} → ${literal(head.value[field])}`,
        `${head.pointer}${pointerStep(field)}`,
        'head',
        { after: head.value[field] ?? null },
      );
}

/** The operation's other extensions: objectives (x-slo) and the like are part of what consumers are promised. */
function compareExtensions(base: Operation, head: Operation, out: Reporter) {
  const names = new Set([...Object.keys(base.value), ...Object.keys(head.value)]);
  for (const name of [...names].sort()) {
    if (!name.startsWith('x-') || name === 'x-sunset' || deprecationDetails.includes(name)) continue;
    if (same(base.value[name], head.value[name])) continue;
    out.add(
      name === 'x-slo' ? 'api-objectives-changed' : 'api-extension-changed',
      'none',
      'none',
      `${code(name)}: ${literal(base.value[name])} → ${literal(head.value[name])}`,
      `${head.pointer}${pointerStep(name)}`,
    );
  }
}

function compareOperation(
  base: Operation,
  head: Operation,
  documents: { base: JsonObject; head: JsonObject },
  day: Day,
): Change[] {
  const out = new Reporter(head.ref);
  if (base.ref.operationId !== head.ref.operationId)
    out.add(
      'api-operation-id-removed',
      'breaking',
      'none',
      `operationId ${code(base.ref.operationId)} → ${code(head.ref.operationId)} (the client's method is renamed)`,
      `${head.pointer}${pointerStep('operationId')}`,
    );
  compareDeprecation(base, head, day, out);
  compareSecurity(base, head, documents, out);
  compareOperationServers(base, head, documents, out);
  compareParameters(base, head, out);
  compareRequestBody(base, head, out);
  compareResponses(base, head, out);
  compareExtensions(base, head, out);
  return out.changes;
}

function firstSentence(text: Json | undefined): string {
  return (
    /^[^.]*\.?/.exec(
      String(text ?? '')
        .replace(/\s+/g, ' ')
        .trim(),
    )?.[0] ?? ''
  ).trim();
}

function compareComponentSchemas(base: JsonObject, head: JsonObject, out: Reporter) {
  const before = objectAt(objectAt(base['components'])['schemas']);
  const after = objectAt(objectAt(head['components'])['schemas']);
  const at = (name: string) => `${pointerStep('components')}${pointerStep('schemas')}${pointerStep(name)}`;
  for (const [name, schema] of Object.entries(after))
    if (!(name in before))
      out.add(
        'component-schema-added',
        'none',
        'none',
        `${code(name)} added: ${firstSentence(objectAt(schema)['description'])}`,
        at(name),
      );
  for (const name of Object.keys(before))
    if (!(name in after))
      out.add('component-schema-removed', 'none', 'none', `${code(name)} removed`, at(name), 'base');
}

/** A schema's `required` names a set: the order it lists them in says nothing. */
const requiredSet = (key: string, item: Json) =>
  key === 'required' && Array.isArray(item) ? [...item].map(String).sort() : item;

/** What a component says to a program: its prose and examples left out, each `required` as a set. */
function substance(value: Json | undefined): Json | undefined {
  if (Array.isArray(value)) return value.map((item) => substance(item) ?? null);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !['description', 'summary', 'example', 'examples', '$comment'].includes(key))
      .map(([key, item]) => [key, substance(requiredSet(key, item)) ?? null]),
  );
}

/** A parameter component with its serialization's defaults filled in, so writing one out changes nothing. */
const onTheWire = (kind: string, value: Json | undefined) =>
  kind === 'parameters' && isObject(value) ? { ...value, ...serializationOf(value) } : value;

const componentKinds: Record<string, string> = {
  parameters: 'parameter',
  responses: 'response',
  headers: 'header',
  requestBodies: 'request-body',
};

/**
 * The shared parameters, responses, headers and request bodies: added, removed or changed, for code generated from
 * the components. What a change does to a call is judged where an operation uses the component.
 */
function compareComponents(base: JsonObject, head: JsonObject, out: Reporter) {
  for (const [kind, slug] of Object.entries(componentKinds)) {
    const before = objectAt(objectAt(base['components'])[kind]);
    const after = objectAt(objectAt(head['components'])[kind]);
    const at = (name: string) => `${pointerStep('components')}${pointerStep(kind)}${pointerStep(name)}`;
    for (const [name, value] of Object.entries(after)) {
      if (!(name in before))
        out.add(`component-${slug}-added`, 'none', 'none', `component ${slug} ${code(name)}: added`, at(name));
      else if (!same(substance(onTheWire(kind, before[name])), substance(onTheWire(kind, value))))
        out.add(`component-${slug}-changed`, 'none', 'none', `component ${slug} ${code(name)}: changed`, at(name));
    }
    for (const name of Object.keys(before))
      if (!(name in after))
        out.add(
          `component-${slug}-removed`,
          'none',
          'none',
          `component ${slug} ${code(name)}: removed`,
          at(name),
          'base',
        );
  }
}

/** The last instant of `today` (YYYY-MM-DD, UTC): a sunset on that day has passed. */
function endOf(today: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(today) || Number.isNaN(Date.parse(`${today}T00:00:00Z`)))
    throw new ContractInputError(`date ${JSON.stringify(today)} is not YYYY-MM-DD`);
  return Date.parse(`${today}T00:00:00Z`) + 24 * 60 * 60 * 1000 - 1;
}

/**
 * Every change from base to head, operations in the head's order, then removed ones, then the document's servers
 * and components. `today` (default: today's UTC date) decides which sunsets have passed, so a verdict can be
 * reproduced.
 */
export function diff(baseRaw: JsonObject, headRaw: JsonObject, options: DiffOptions = {}): Change[] {
  const today = options.today ?? new Date().toISOString().slice(0, 10);
  const lastInstant = endOf(today);
  const base = dereference(baseRaw);
  const head = dereference(headRaw);
  const before = operationsOf(base);
  const after = operationsOf(head);
  const changes: Change[] = [];
  for (const [shape, operation] of after) {
    const previous = before.get(shape);
    if (!previous) {
      const out = new Reporter(operation.ref);
      out.add('endpoint-added', 'additive', 'none', 'operation added', operation.pointer);
      changes.push(...out.changes);
      continue;
    }
    changes.push(...compareOperation(previous, operation, { base, head }, { today, lastInstant }));
  }
  // A path the head still serves answers a removed method with 405, a path it no longer has with 404.
  const pathOf = (shape: string) => shape.slice(shape.indexOf(' ') + 1);
  const servedPaths = new Set([...after.keys()].map(pathOf));
  for (const [shape, operation] of before) {
    if (after.has(shape)) continue;
    const answer = servedPaths.has(pathOf(shape)) ? 405 : 404;
    const out = new Reporter(operation.ref);
    const sunset = sunsetOf(operation.value);
    const pastSunset =
      operation.value['deprecated'] === true && sunset !== undefined && Date.parse(sunset) <= lastInstant;
    if (pastSunset)
      out.add(
        'api-removed-after-sunset',
        'warning',
        'none',
        `operation removed after its sunset ${sunset}`,
        operation.pointer,
        'base',
      );
    else if (operation.value['deprecated'] === true)
      out.add(
        'api-removed-before-sunset',
        'breaking',
        'none',
        `operation removed before its sunset ${literal(sunset)} (answers ${answer})`,
        operation.pointer,
        'base',
      );
    else
      out.add(
        'api-removed-without-deprecation',
        'breaking',
        'none',
        `operation removed without deprecation (answers ${answer})`,
        operation.pointer,
        'base',
      );
    changes.push(...out.changes);
  }
  const components = new Reporter();
  compareServers(base, head, components);
  compareSecuritySchemes(base, head, components);
  compareComponents(base, head, components);
  compareComponentSchemas(baseRaw, headRaw, components);
  changes.push(...components.changes);
  return changes;
}
