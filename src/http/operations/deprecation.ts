import { ApiError } from '../../errors.js';
import type { OperationObject } from '../../openapi/document.js';

interface Replacement {
  operationId?: string;
  href: string;
}

function fail(operationId: string, problem: string): never {
  throw new Error(`openapi.yaml: operation ${operationId} ${problem}`);
}

function instant(operationId: string, extension: string, value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime()))
    fail(operationId, `has ${extension} ${JSON.stringify(value)}, which is not an RFC 3339 date-time`);
  return date;
}

function linkTarget(operationId: string, extension: string, value: unknown): string {
  // A Link target may not contain '>' or whitespace, and must be a path on
  // this server so that the header never points clients elsewhere by mistake.
  if (typeof value !== 'string' || !/^\/[^\s<>]*$/.test(value))
    fail(operationId, `has ${extension} ${JSON.stringify(value)}; expected a path starting with /`);
  return value;
}

const deprecationHeaders = ['Deprecation', 'Sunset', 'Link'] as const;

/**
 * The success responses of a deprecated operation, and the 410 it answers
 * after its sunset, must declare the headers they are going to get.
 */
function assertHeadersDeclared(operation: OperationObject, names: readonly string[]): void {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (!(status.startsWith('2') || status === goneStatus) || response.$ref) continue;
    const declared = Object.keys(response.headers ?? {});
    const missing = names.filter((name) => !declared.includes(name));
    if (missing.length > 0)
      fail(operation.operationId, `is deprecated but its ${status} response does not declare ${missing.join(', ')}`);
  }
}

const goneStatus = '410';

/**
 * The instant an operation is removed: its `x-sunset`, the same value its
 * Sunset header announces. From then on every request to it that passed
 * admission answers 410, so the operation must declare that answer.
 * Undefined for an operation without a sunset.
 */
export function sunsetOf(operation: OperationObject): Date | undefined {
  if (operation['x-sunset'] === undefined) return undefined;
  const sunset = instant(operation.operationId, 'x-sunset', operation['x-sunset']);
  if (operation.responses?.[goneStatus] === undefined)
    fail(operation.operationId, `has x-sunset but declares no ${goneStatus} response for the time after it`);
  return sunset;
}

/**
 * The Deprecation (RFC 9745), Sunset (RFC 8594) and Link headers an
 * operation's responses carry, read from the operation in openapi.yaml:
 * `deprecated: true` with `x-deprecated-at`, and optionally `x-sunset`,
 * `x-replacement.href` and `x-deprecation-docs`. Undefined for an operation
 * that is not deprecated. A malformed declaration throws at start, not per request.
 */
export function deprecationHeadersOf(operation: OperationObject): Record<string, string> | undefined {
  const id = operation.operationId;
  const extensions = ['x-deprecated-at', 'x-sunset', 'x-replacement', 'x-deprecation-docs'] as const;
  if (!operation.deprecated) {
    const stray = extensions.filter((name) => operation[name] !== undefined);
    if (stray.length > 0) fail(id, `has ${stray.join(', ')} but not deprecated: true`);
    return undefined;
  }
  const headers: Record<string, string> = {
    deprecation: `@${Math.floor(instant(id, 'x-deprecated-at', operation['x-deprecated-at']).getTime() / 1000)}`,
  };
  const sunset = sunsetOf(operation);
  if (sunset !== undefined) headers['sunset'] = sunset.toUTCString();
  const links: string[] = [];
  const replacement = operation['x-replacement'] as Replacement | undefined;
  if (replacement !== undefined)
    links.push(`<${linkTarget(id, 'x-replacement.href', replacement.href)}>; rel="successor-version"`);
  const docs = operation['x-deprecation-docs'];
  if (docs !== undefined) links.push(`<${linkTarget(id, 'x-deprecation-docs', docs)}>; rel="deprecation"`);
  if (links.length > 0) headers['link'] = links.join(', ');
  assertHeadersDeclared(
    operation,
    deprecationHeaders.filter((name) => headers[name.toLowerCase()] !== undefined),
  );
  return headers;
}

/**
 * A route's first step after admission (authentication, rate limit): once
 * the clock reaches the operation's sunset, 410 with the Error object. The
 * Deprecation, Sunset and Link headers were set on arrival and stay on it,
 * so the answer names the replacement. Before the sunset it costs one
 * comparison and changes nothing.
 */
export function sunsetGate(operation: OperationObject, sunset: Date, now: () => number) {
  const at = sunset.getTime();
  const replaced = operation['x-replacement'] !== undefined;
  const message =
    `${operation.operationId} was removed on ${sunset.toUTCString()}` +
    (replaced ? '; use the replacement its Link header names.' : '.');
  // Called back rather than async: no promise per request.
  return function refuseAfterSunset(_request: unknown, _reply: unknown, done: (error?: Error) => void): void {
    if (now() >= at) done(new ApiError(410, 'gone', message));
    else done();
  };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation's Deprecation, Sunset and Link headers, set on arrival (setSecurityHeaders). */
    deprecationHeaders?: Record<string, string>;
  }
}

/**
 * A handler's own headers with the deprecation's Link after the handler's
 * (pagination) one: both are valid in one header. The others were set on
 * arrival and stay.
 */
export function withDeprecationLink(
  headers: Record<string, string>,
  deprecation: Record<string, string> | undefined,
): Record<string, string> {
  const link = deprecation?.['link'];
  const own = Object.keys(headers).find((name) => name.toLowerCase() === 'link');
  if (link === undefined || own === undefined) return headers;
  return { ...headers, [own]: `${headers[own] ?? ''}, ${link}` };
}

const pathParameter = /\{([A-Za-z0-9_]+)\}/;
type FillTemplate = (params: unknown) => string;
const compiledTemplates = new Map<string, FillTemplate>();

/**
 * `{petId}` in a link target (x-replacement.href) stands for the request's
 * path parameter of that name, so the successor link names the same animal.
 * The template is split once (static text, name, static text, ...); a
 * request only concatenates.
 */
function compileTemplate(template: string): FillTemplate {
  const parts = template.split(new RegExp(pathParameter.source, 'g'));
  return (params) => {
    const values = (params ?? {}) as Record<string, unknown>;
    let text = parts[0] ?? '';
    for (let index = 1; index < parts.length; index += 2) {
      const parameter = values[parts[index] ?? ''];
      if (typeof parameter === 'string' || typeof parameter === 'number') text += encodeURIComponent(parameter);
      text += parts[index + 1] ?? '';
    }
    return text;
  };
}

function expandTemplate(template: string, params: unknown): string {
  let fill = compiledTemplates.get(template);
  if (fill === undefined) {
    fill = compileTemplate(template);
    compiledTemplates.set(template, fill);
  }
  return fill(params);
}

/** The deprecation headers for one request: templates in the Link filled from its path parameters. */
export function deprecationHeadersFor(headers: Record<string, string>, params: unknown): Record<string, string> {
  const link = headers['link'];
  return link !== undefined && pathParameter.test(link) ? { ...headers, link: expandTemplate(link, params) } : headers;
}
