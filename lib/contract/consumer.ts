// Each change in the consumer's words: one sentence saying what a client written against the base meets now.
// The developer's line (`message`) says where and what changed; this says what it does to the one calling.
import { isObject, type Json } from '../openapi/dereference.js';
import type { Change } from './change.js';
import { code, count, inline } from './text.js';

/** The note on a rule's change that no value shows: the place admits the same values, or differs by others. */
export const sameValues = '(the same values either way)';
export const sameAlone = '(no value shows this change on its own)';
/** The note on a change judged by its rule: values that long, or numbers that large, are not built. */
export const byRule = '(judged by its bound: no value that size is built)';

/** Longest text quoted as itself; a longer one is named by its length (a bound is what tells it apart). */
const maxQuotedText = 40;
/** Longest value quoted in a sentence; a longer one is cut with an ellipsis (the change carries it whole). */
const maxQuoted = 120;

export function quoted(value: Json | undefined): string {
  if (typeof value === 'string' && [...value].length > maxQuotedText)
    return `a text of ${[...value].length} characters`;
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return inline(text.length > maxQuoted ? `${text.slice(0, maxQuoted - 1)}…` : text);
}

/** The place a message names ("request body `application/json`.name"), before its first ": ". */
const whereOf = (change: Pick<Change, 'message'>) => change.message.split(': ')[0] ?? change.message;

/** The place as a reader says it: "`name` in the request body", "the query parameter `limit`". */
export function subjectOf(change: Pick<Change, 'message'>): string {
  const where = whereOf(change);
  const nested = /^(.*?`[^`]*\/[^`]*`)((?:\.|\[\]).+)$/.exec(where);
  const container = (text: string) =>
    text
      .replace(/^request body `[^`]*`$/, 'the request body')
      .replace(/^response (`[^`]+`) `[^`]*`$/, 'the $1 response');
  if (nested?.[1] && nested[2]) {
    const path = nested[2].replace(/^\./, '');
    return path.startsWith('[].')
      ? `${inline(path.slice(3))} in each item of ${container(nested[1])}`
      : `${inline(path)} in ${container(nested[1])}`;
  }
  const header = /^response (`[^`]+`) header (`[^`]+`)$/.exec(where);
  if (header) return `the ${header[2]} header of the ${header[1]} response`;
  return /^(query|path|header|cookie) parameter/.test(where) ? `the ${where}` : container(where);
}

/** The last step of a JSON pointer, unescaped: a status, a media type, a header's name. */
const lastStep = (pointer: string) => (pointer.split('/').pop() ?? '').replace(/~1/g, '/').replace(/~0/g, '~');

const capital = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/** The sentence of a change a schema comparison made (its level already decided by the values). */
export function schemaSentence(change: Change, direction: 'request' | 'response', focus?: Focus): string {
  const subject = subjectOf(change);
  const suffix = change.rule.replace(/^(request|response)-(parameter|body|header|property)-/, '');
  if (/default-value/.test(change.rule))
    return direction === 'request'
      ? `Requests that leave out ${subject} are now served as if it were ${quoted(change.after)}, not ${quoted(change.before)}.`
      : `The documented default of ${subject} changed; what the service sends does not.`;
  if (suffix === 'deprecated')
    return `${capital(subject)} is deprecated: stop ${direction === 'request' ? 'sending' : 'reading'} it before it is removed.`;
  if (suffix === 'reactivated') return `${capital(subject)} is no longer deprecated.`;
  if (suffix === 'became-read-only')
    return `Requests that send ${subject} are now refused or have it ignored: it became read-only.`;
  if (suffix === 'no-longer-read-only') return `Requests may now send ${subject}.`;
  if (suffix === 'became-write-only') return `Responses no longer carry ${subject}: it became write-only.`;
  if (suffix === 'no-longer-write-only') return `Responses may now carry ${subject}.`;
  switch (change.rule) {
    case 'request-property-became-optional':
      return `Requests may now leave out ${subject}.`;
    case 'new-optional-request-property':
      return `Requests may now send ${subject}.`;
    case 'response-optional-property-added':
    case 'response-required-property-added':
      return `Responses may now carry ${subject}; clients ignore it until they use it.`;
    case 'response-optional-property-removed':
      return `Responses no longer carry ${subject}; a client that read it when present loses it.`;
    case 'request-property-removed':
      if (change.level !== 'breaking')
        return `The service no longer reads ${subject}; requests that send it are served without it.`;
  }
  const example = change.counterExample;
  if (change.level === 'breaking' || (change.level === 'warning' && example)) {
    // The part of the value the change is about, when it is a part: "`name` `"a b"`", else the whole value.
    const part = example && focus && focus.path.length > 0 && focus.value !== undefined ? focus : undefined;
    const path = part?.path.map((step) => (/^\d+$/.test(step) ? `[${step}]` : `.${step}`)).join('');
    const shown = part && path ? `${inline(path.replace(/^\./, ''))} ${quoted(part.value)}` : undefined;
    if (direction === 'request') {
      if (!example)
        return `${capital(unbuilt(change, subject) ?? `requests that were accepted may now be refused with 400 (${subject})`)}.`;
      const request = shown
        ? `requests whose ${where(change)} has ${shown} (as in ${quoted(example.value)})`
        : `requests ${subjectIn(change)} ${quoted(example.value)}`;
      // A reviewed narrowing refuses only what the service never served: the contract catches up with the service.
      if (change.reviewed)
        return `The contract no longer allows ${request}; as reviewed, the service served none of them, so no request it served is refused now.`;
      return `${capital(request)}, accepted before, are now refused with 400.`;
    }
    if (!example) return `Responses may now carry ${subject} values the old contract did not allow.`;
    // The counter-example lacks the part the change is about: what a client meets is its absence.
    if (focus && focus.path.length > 0 && focus.value === undefined)
      return `Responses may now lack ${subject}, as in ${quoted(example.value)}, which the old contract always carried; a client that reads it may fail.`;
    return `Responses may now carry ${shown ?? `${subject} as in ${quoted(example.value)}`}${shown ? ` in ${containerOf(change)}` : ''}, which the old contract did not allow; a client written for it may fail to read them.`;
  }
  if (change.level === 'additive')
    return subject === 'the request body'
      ? 'Requests may now send bodies that were refused before; every body accepted before still is.'
      : `Requests may now send values of ${subject} that were refused before; every value accepted before still is.`;
  if (change.message.endsWith(sameAlone))
    return `On its own this changes nothing for clients; the other changes to ${subject} do.`;
  if (direction === 'response')
    return `Nothing changes for clients: the service sends no value of ${subject} it could not send before.`;
  return `Nothing changes for clients: ${subject} accepts the same values as before.`;
}

/**
 * A bound no built value shows (an int64 bound): the requests it refuses, said from the bound itself, or undefined
 * for a rule not about one bound.
 */
function unbuilt(change: Change, subject: string): string | undefined {
  const bound = quoted(change.after);
  if (/-max-decreased$/.test(change.rule) || /-max-set$/.test(change.rule))
    return `requests with ${subject} above ${bound}, accepted before, are now refused with 400`;
  if (/-min-increased$/.test(change.rule) || /-min-set$/.test(change.rule))
    return `requests with ${subject} below ${bound}, accepted before, are now refused with 400`;
  return undefined;
}

/** The part of a counter-example a change is about: its path in the value, and the value there (none: it lacks it). */
export interface Focus {
  path: string[];
  value: Json | undefined;
}

/** What holds the value: "body", "query parameter `id`". */
function where(change: Change): string {
  const parameter = /^((?:query|path|header|cookie) parameter `[^`]+`)/.exec(whereOf(change));
  return parameter?.[1] ?? 'body';
}

/** The response or request body a message names, as a reader says it. */
function containerOf(change: Change): string {
  const match = /^(?:response (`[^`]+`)|request body)/.exec(whereOf(change));
  if (!match) return 'the answer';
  return match[1] ? `the ${match[1]} response` : 'the request body';
}

/** "with the query parameter `limit` =" or "with a body like": how a request holding the example is named. */
function subjectIn(change: Change): string {
  const where = whereOf(change);
  const parameter = /^((?:query|path|header|cookie) parameter `[^`]+`)/.exec(where);
  if (parameter?.[1]) return `with the ${parameter[1]} set to`;
  return 'with a body like';
}

/** The sentence of any other change, from its rule, level and message. */
export function sentence(change: Omit<Change, 'consumer'>): string {
  const where = whereOf(change);
  const last = lastStep(change.pointer);
  const subject = /-status-/.test(change.rule)
    ? `a ${inline(last)} answer`
    : /-media-type-/.test(change.rule)
      ? `${inline(last)} ${change.rule.startsWith('request') ? 'bodies' : 'answers'}`
      : subjectOf(change);
  const operation = change.operation ? `${change.operation.method} ${change.operation.path}` : 'the API';
  const forOperation = change.operation ? ` for ${operation}` : '';
  // A removed operation's message says what its path answers now: 405 where other methods remain, else 404.
  const answer = /\(answers (\d{3})\)$/.exec(change.message)?.[1] ?? '404';
  const moved = (failure: string) =>
    change.level === 'breaking'
      ? `Clients configured with ${address(change.before)} must now call ${address(change.after)}${forOperation}: ${failure}.`
      : `The internal server ${address(change.before)} moved to ${address(change.after)}${forOperation}: the team's tools configured with it must follow; published clients are not pointed at it.`;
  const table: Record<string, string> = {
    'endpoint-added': `${operation} is new: clients may start calling it.`,
    'api-removed-without-deprecation': `Calls to ${operation} now fail (${answer}): it was removed without a deprecation period.`,
    'api-removed-before-sunset': `Calls to ${operation} now fail (${answer}) before the sunset it announced.`,
    'api-removed-after-sunset': `${operation} is gone after its announced sunset, as promised.`,
    'api-operation-id-removed': `Generated clients lose the method for ${operation}: its operationId changed.`,
    'endpoint-deprecated': deprecatedSentence(operation, change.after),
    'api-deprecated-sunset-passed': `Calls to ${operation} fail with 410 from the deploy on: its sunset ${quoted(change.after)} is already past on ${String(change.before)}, the day judged, so no client gets time to move.`,
    'endpoint-reactivated': `${operation} is no longer deprecated.`,
    'api-deprecated-sunset-missing': `${operation} is deprecated without a sunset date: clients cannot plan the move.`,
    'api-sunset-deleted': `${operation} lost its sunset date while still deprecated: clients cannot plan the move.`,
    'api-sunset-date-changed-too-small': `${operation} will be removed sooner than announced: clients have less time to move.`,
    'api-sunset-date-changed': `${operation}'s sunset moved; clients keep at least the time announced.`,
    'api-deprecation-details-changed': `The deprecation notes of ${operation} changed: ${detail(change)}.`,
    'api-objectives-changed': `The service-level objectives of ${operation} changed.`,
    'api-extension-changed': `An extension of ${operation} changed; clients are not affected.`,
    'new-required-request-parameter': `Requests to ${operation} without ${subject} are now refused with 400.`,
    'new-optional-request-parameter': `Requests to ${operation} may now send ${subject}.`,
    'request-parameter-became-required': `Requests to ${operation} without ${subject} are now refused with 400.`,
    'request-parameter-became-optional': `Requests to ${operation} may now leave out ${subject}.`,
    'request-parameter-deprecated': `${capital(subject)} of ${operation} is deprecated: stop sending it before it is removed.`,
    'request-parameter-reactivated': `${capital(subject)} of ${operation} is no longer deprecated.`,
    'request-parameter-serialization-changed': `Requests to ${operation} that write ${subject} the old way are now read differently or refused.`,
    'request-parameter-removed':
      change.level === 'breaking'
        ? `Requests to ${operation} that send ${subject} are now refused, or served without what it meant.`
        : `Requests to ${operation} that send ${subject} are served as if it were absent (a full answer instead of a 304).`,
    'added-required-request-body': `Requests to ${operation} without a body are now refused with 400.`,
    'added-optional-request-body': `Requests to ${operation} may now send a body.`,
    'request-body-removed': `Requests to ${operation} that send a body are now refused.`,
    'request-body-became-required': `Requests to ${operation} without a body are now refused with 400.`,
    'request-body-became-optional': `Requests to ${operation} may now leave out the body.`,
    'request-body-limit-decreased': `Requests to ${operation} with bodies of ${size(change.after, 1)} to ${size(change.before)} bytes, accepted before, are now refused with 413.`,
    'request-body-limit-increased': `Requests to ${operation} may now send bodies of up to ${size(change.after)} bytes; every body accepted before still is.`,
    'request-body-bytes-schema-changed': `Nothing changes for clients: ${subject} is bytes, sent as they are; no schema checks them.`,
    'response-body-bytes-schema-changed': `Nothing changes for clients: ${subject} is bytes, answered as they are; no schema checks them.`,
    'request-body-media-type-added': `Requests to ${operation} may now send ${subject}.`,
    'request-body-media-type-removed': `Requests to ${operation} with ${subject} are now refused with 415.`,
    'response-media-type-removed': `Clients of ${operation} that read ${subject} no longer get them.`,
    'response-media-type-added':
      change.level === 'breaking'
        ? `Clients of ${operation} may now get ${subject} they did not ask for, which a client written for the old answers cannot read.`
        : `Clients of ${operation} get ${subject} only when they ask for them with Accept.`,
    'response-success-status-added':
      change.level === 'breaking'
        ? `Clients of ${operation} may now get ${subject}, which a client written for the old answers does not handle.`
        : `Clients of ${operation} get ${subject} only when they ask for it.`,
    'response-non-success-status-added': `Clients of ${operation} may now get ${subject} (an error): handle it as one.`,
    'response-success-status-removed': `Clients of ${operation} no longer get ${subject}.`,
    'response-non-success-status-removed': `Clients of ${operation} no longer get ${subject} (an error).`,
    'response-header-added': `Responses of ${operation} may now carry ${subject}.`,
    'response-header-removed': `Responses of ${operation} no longer carry ${subject}; clients that read it lose it.`,
    'response-header-became-optional': `Responses of ${operation} may now lack ${subject}.`,
    'response-header-became-required': `Responses of ${operation} now always carry ${subject}.`,
    'response-link-added': `Responses of ${operation} now offer ${subject} to follow.`,
    'response-link-removed': `Clients of ${operation} that follow ${subject} can no longer.`,
    'response-link-changed': `Clients of ${operation} that follow ${subject} now reach another operation or values.`,
    'api-security-added': `Requests to ${operation} without a credential are now refused with 401.`,
    'api-security-updated': `Requests to ${operation} with the credential clients used are now refused with 401.`,
    'api-security-scope-added': change.reviewed
      ? `${capital(operation)} now asks for ${scopes(change.after)}; as reviewed, every key accepted before holds it, so none is refused.`
      : `Requests to ${operation} with a key lacking ${scopes(change.after)} are now refused with 403.`,
    'api-security-scope-removed': `Keys with fewer scopes may now call ${operation}.`,
    'api-security-removed': `${operation} no longer needs a credential.`,
    'api-server-base-path-changed': moved('every request to the old base path fails'),
    'api-server-host-changed': moved('every request to the old host fails'),
    'api-server-removed':
      change.level === 'breaking'
        ? `Clients configured with ${address(change.before)} can no longer reach ${operation} there.`
        : `The internal server ${address(change.before)} is gone${forOperation}: the team's tools configured with it must move; published clients are not pointed at it.`,
    'api-server-added': `${capital(operation)} is also served at ${address(change.after)}.`,
  };
  const text = table[change.rule];
  if (text) return text;
  if (change.rule.startsWith('api-security-component-'))
    return change.level === 'breaking'
      ? `Clients must send their credentials differently: ${where}.`
      : `Nothing changes for clients: ${where}.`;
  if (change.rule.startsWith('component-')) return componentSentence(change);
  const levelText: Record<string, string> = {
    breaking: `A client written against the old contract may fail: ${subject}.`,
    warning: `A client keeps working but should look: ${subject}.`,
    additive: `Clients may use something new: ${subject}.`,
    none: `Nothing changes for clients: ${subject}.`,
  };
  return levelText[change.level] ?? levelText['none']!;
}

/**
 * A new deprecation: what to move to, and by when. A sunset already past is its own breaking change
 * (api-deprecated-sunset-passed); this sentence then gives no time left to move in.
 */
function deprecatedSentence(operation: string, after: Json | undefined): string {
  const { sunset, replacement } = isObject(after) ? after : {};
  const to =
    typeof replacement === 'string' ? `move to ${code(replacement)}` : 'stop calling it (it names no replacement)';
  return typeof sunset === 'string'
    ? `${operation} is deprecated: ${to} by its sunset ${quoted(sunset)}.`
    : `${operation} is deprecated: ${to}.`;
}

/** "`x-deprecated-at` is now `…`": the detail a deprecation-details change names, and its new value. */
function detail(change: Omit<Change, 'consumer'>): string {
  const field = /^(`[^`]+`)/.exec(change.message)?.[1] ?? 'a detail';
  return change.after === null || change.after === undefined
    ? `${field} is gone`
    : `${field} is now ${quoted(change.after)}`;
}

/** The scopes a change adds, each as code: "the scope `pets:read`", not the list's JSON. */
function scopes(value: Json | undefined): string {
  const names = Array.isArray(value) ? value.map((name) => code(String(name))) : [quoted(value)];
  return names.length === 1 ? `the scope ${names[0]}` : `the scopes ${names.join(', ')}`;
}

/** A number of bytes from a change's `before` or `after` (plus `more`), as people read it: 1,025. */
const size = (value: Json | undefined, more = 0) => (typeof value === 'number' ? count(value + more) : quoted(value));

/** A server's URL as written (a URL is never cut: the reader configures it). */
const address = (value: Json | undefined) => (typeof value === 'string' ? code(value) : quoted(value));

/** A component added, removed or changed: what code generated from the components meets; calls are judged apart. */
function componentSentence(change: Omit<Change, 'consumer'>): string {
  const description = /^`[^`]*` added: (.+)$/.exec(change.message)?.[1]?.replace(/\.$/, '');
  return componentsSentence(change.rule, [lastStep(change.pointer)], description);
}

/** Names as a list people read: "`A`", "`A` and `B`", "`A`, `B` and `C`". */
const listed = (names: string[]) =>
  names.length < 2 ? names.map(code).join('') : `${names.slice(0, -1).map(code).join(', ')} and ${code(names.at(-1)!)}`;

/**
 * Components of one kind all added, all removed or all changed (one rule, `component-KIND-WHAT`), in one sentence:
 * one shared change (a header every response uses) reaches many, and the review says them together.
 */
export function componentsSentence(rule: string, names: string[], description?: string): string {
  const [, kind = 'schema', what = 'changed'] = /^component-(.+)-(added|removed|changed)$/.exec(rule) ?? [];
  const many = names.length > 1;
  const subject = `The ${kind.replace('-', ' ')} component${many ? 's' : ''} ${listed(names)}`;
  const [them, one] = many ? ['them', 'one'] : ['it', 'it'];
  if (what === 'added')
    return `${subject} ${many ? 'are' : 'is'} new${description ? ` (${description})` : ''}: code generated from the components gains ${them}; no call changes until an operation uses ${one}.`;
  if (what === 'removed')
    return `${subject} ${many ? 'are' : 'is'} gone: code generated from the components loses ${them}; each call that used ${one} is judged under its operation.`;
  return `${subject} changed: code generated from the components changes with ${them}; each call that uses ${one} is judged under its operation.`;
}

/** The component a change of components names: the last step of its pointer. */
export const componentOf = (change: Pick<Change, 'pointer'>) => lastStep(change.pointer);
