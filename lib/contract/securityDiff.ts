// Security: which credentials an operation accepts, and what the schemes behind them are. A client holds one
// way in (one alternative of the requirement list): the head must still accept it.
import { isObject, same, type Json, type JsonObject } from '../openapi/dereference.js';
import type { Operation } from './operations.js';
import type { Reporter } from './reporter.js';
import { reviewedScopeChange } from './reviewed.js';
import { code, literal, pointerStep } from './text.js';

const objectAt = (value: Json | undefined): JsonObject => (isObject(value) ? value : {});

/** One alternative: each scheme it needs, with the scopes. */
type Alternative = Map<string, string[]>;

/** The operation's own security, or the document's. An empty list, or an empty alternative, means no credential. */
export function requirementsOf(operation: JsonObject, document: JsonObject): Alternative[] {
  const list = operation['security'] ?? document['security'];
  const alternatives = (Array.isArray(list) ? list : []).filter(isObject);
  if (alternatives.length === 0) return [new Map<string, string[]>()];
  return alternatives.map(
    (alternative) =>
      new Map(
        Object.entries(alternative).map(([scheme, scopes]) => [
          scheme,
          (Array.isArray(scopes) ? scopes : []).map(String),
        ]),
      ),
  );
}

/** Whether a client holding `held` satisfies `needed`. */
const satisfies = (held: Alternative, needed: Alternative) =>
  [...needed].every(([scheme, scopes]) => {
    const own = held.get(scheme);
    return own !== undefined && scopes.every((scope) => own.includes(scope));
  });

const sameSchemes = (a: Alternative, b: Alternative) =>
  a.size === b.size && [...a.keys()].every((scheme) => b.has(scheme));

export const describeAlternative = (alternative: Alternative) =>
  alternative.size === 0
    ? 'no credential'
    : [...alternative].map(([scheme, scopes]) => `${scheme} [${scopes.join(', ')}]`).join(' + ');

export function compareSecurity(
  base: Operation,
  head: Operation,
  documents: { base: JsonObject; head: JsonObject },
  out: Reporter,
) {
  const before = requirementsOf(base.value, documents.base);
  const after = requirementsOf(head.value, documents.head);
  const pointer = `${head.pointer}${pointerStep('security')}`;
  for (const held of before) {
    if (after.some((needed) => satisfies(held, needed))) continue;
    const sameWay = after.find((needed) => sameSchemes(held, needed));
    if (!sameWay) {
      const rule = held.size === 0 ? 'api-security-added' : 'api-security-updated';
      out.add(
        rule,
        'breaking',
        'request',
        `security: ${describeAlternative(held)} no longer accepted; now ${after.map(describeAlternative).join(' or ')}`,
        pointer,
      );
      continue;
    }
    for (const [scheme, scopes] of sameWay) {
      const own = held.get(scheme) ?? [];
      const added = scopes.filter((scope) => !own.includes(scope));
      if (added.length === 0) continue;
      const reviewed = reviewedScopeChange(scheme, own, scopes);
      out.emit({
        rule: 'api-security-scope-added',
        level: reviewed ? 'warning' : 'breaking',
        direction: 'request',
        ...(out.operation ? { operation: out.operation } : {}),
        pointer,
        side: 'head',
        message: `security: ${code(scheme)} scopes ${literal(own)} → ${literal(scopes)}`,
        before: own,
        after: scopes,
        ...(reviewed ? { reviewed: reviewed.reason } : {}),
      });
    }
  }
  for (const needed of after) {
    const previous = before.find((held) => sameSchemes(held, needed));
    if (!previous) continue;
    for (const [scheme, scopes] of previous) {
      const removed = scopes.filter((scope) => !(needed.get(scheme) ?? []).includes(scope));
      if (removed.length > 0)
        out.add(
          'api-security-scope-removed',
          'additive',
          'request',
          `security: ${code(scheme)} scopes ${literal(scopes)} → ${literal(needed.get(scheme) ?? [])}`,
          pointer,
        );
    }
  }
  if (!before.some((held) => held.size === 0) && after.some((needed) => needed.size === 0))
    out.add('api-security-removed', 'warning', 'request', 'security: no credential needed any more', pointer);
}

/** The fields of a scheme that decide what a client sends; a description or bearerFormat is prose. */
const schemeFields: Record<string, string> = {
  type: 'api-security-component-type-changed',
  scheme: 'api-security-component-scheme-changed',
  in: 'api-security-component-in-changed',
  name: 'api-security-component-name-changed',
  flows: 'api-security-component-oauth-flows-changed',
  openIdConnectUrl: 'api-security-component-openid-url-changed',
};

export function compareSecuritySchemes(base: JsonObject, head: JsonObject, out: Reporter) {
  const schemes = (document: JsonObject) => objectAt(objectAt(document['components'])['securitySchemes']);
  const before = schemes(base);
  const after = schemes(head);
  const at = (name: string) => `${pointerStep('components')}${pointerStep('securitySchemes')}${pointerStep(name)}`;
  for (const [name, scheme] of Object.entries(after)) {
    const previous = before[name];
    if (previous === undefined) {
      out.add('api-security-component-added', 'additive', 'request', `security scheme ${code(name)} added`, at(name));
      continue;
    }
    for (const [field, rule] of Object.entries(schemeFields)) {
      const was = objectAt(previous)[field];
      const is = objectAt(scheme)[field];
      if (same(was, is)) continue;
      const caseOnly = typeof was === 'string' && typeof is === 'string' && was.toLowerCase() === is.toLowerCase();
      out.add(
        rule,
        caseOnly && field !== 'name' ? 'none' : 'breaking',
        'request',
        `security scheme ${code(name)}: ${field} ${literal(was)} → ${literal(is)}`,
        `${at(name)}${pointerStep(field)}`,
      );
    }
  }
  for (const name of Object.keys(before))
    if (!(name in after))
      out.add(
        'api-security-component-removed',
        'warning',
        'request',
        `security scheme ${code(name)} removed`,
        at(name),
        'base',
      );
}
