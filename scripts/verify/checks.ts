import { conformanceProblems } from '../../lib/conformance/checks.js';
import type { Operation } from '../../lib/conformance/spec.js';
import { essenceOf, isJsonMediaType } from '../../src/openapi/mediaTypes.js';
import type { ReceivedResponse } from './http.js';

/** One way a response breaks the contract: a short name for the table and JUnit, and the detail. */
export interface Problem {
  check: string;
  message: string;
}

// Headers of HTTP itself (framing, connection), never declared per response.
const transportHeaders = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

/** The conformance suite's findings (lib/conformance/checks.ts) under the names the report uses. */
function kindOf(problem: string): string {
  if (problem.startsWith('server error')) return 'server error';
  if (/^status \d+ is not declared/.test(problem)) return 'undeclared status';
  if (problem.startsWith('body does not match')) return 'body outside its schema';
  if (problem.startsWith('required header')) return 'required header missing';
  if (problem.startsWith('header ')) return 'header outside its schema';
  if (problem.startsWith('Error.status')) return 'not the Error object';
  if (problem.startsWith('Content-Type ')) return 'wrong content type';
  return 'body is not the declared JSON';
}

/** The body of an answer in a JSON media type (application/json, any application/*+json), parsed. */
export function parseJson(response: ReceivedResponse): unknown {
  if (!isJsonMediaType(response.headers.get('content-type') ?? undefined) || response.text === '') return undefined;
  try {
    return JSON.parse(response.text) as unknown;
  } catch {
    return undefined;
  }
}

function contentTypeProblems(operation: Operation, response: ReceivedResponse): Problem[] {
  const declared = operation.responses.get(String(response.status));
  if (declared === undefined) return [];
  const contentType = response.headers.get('content-type');
  // The service answers in the media type the status declares (application/json, a +json type, image/png), no
  // other.
  const expected = declared.mediaType;
  const bytes = declared.kind === 'bytes';
  if (
    (declared.validateBody !== undefined || bytes) &&
    expected !== undefined &&
    essenceOf(contentType ?? '') !== essenceOf(expected)
  )
    return [
      {
        check: 'wrong content type',
        message: `Content-Type ${JSON.stringify(contentType)}; openapi.yaml declares ${expected} for ${response.status}`,
      },
    ];
  if (declared.validateBody === undefined && !bytes && response.text !== '')
    return [
      {
        check: 'body where none is declared',
        message: `${response.status} declares no body, got ${response.text.length} bytes`,
      },
    ];
  return [];
}

/** Every error answer, declared status or not, is the Error object {code, message, status}. */
function errorObjectProblems(response: ReceivedResponse, json: unknown): Problem[] {
  if (response.status < 400) return [];
  const body = json as Record<string, unknown> | undefined;
  const keys = body !== undefined && typeof body === 'object' && body !== null ? Object.keys(body).sort() : [];
  const isErrorObject =
    keys.join(',') === 'code,message,status' &&
    typeof body?.['code'] === 'string' &&
    typeof body['message'] === 'string' &&
    body['status'] === response.status;
  return isErrorObject
    ? []
    : [
        {
          check: 'not the Error object',
          message: `a ${response.status} must answer {code, message, status} with status ${response.status}; got ${response.text.slice(0, 200)}`,
        },
      ];
}

/** A deprecated operation's headers say what its x-deprecated-at, x-sunset and x-replacement say. */
function deprecationProblems(operation: Operation, response: ReceivedResponse): Problem[] {
  const deprecation = operation.deprecation;
  const declared = operation.responses.get(String(response.status));
  if (deprecation === undefined || !declared?.headers.some((header) => header.name === 'deprecation')) return [];
  const problems: string[] = [];
  const expected = `@${Math.floor(deprecation.deprecatedAt.getTime() / 1000)}`;
  if (response.headers.get('deprecation') !== expected)
    problems.push(`Deprecation ${JSON.stringify(response.headers.get('deprecation'))}, expected ${expected}`);
  const sunset = deprecation.sunset?.toUTCString();
  if (sunset !== undefined && response.headers.get('sunset') !== sunset)
    problems.push(`Sunset ${JSON.stringify(response.headers.get('sunset'))}, expected ${sunset}`);
  if (deprecation.replacement !== undefined && !/rel="successor-version"/.test(response.headers.get('link') ?? ''))
    problems.push(`Link ${JSON.stringify(response.headers.get('link'))} names no rel="successor-version"`);
  return problems.map((message) => ({ check: 'deprecation headers', message }));
}

/** Response headers the operation does not declare for this status (named, not failed). */
export function undeclaredHeaders(operation: Operation, response: ReceivedResponse): string[] {
  const declared = new Set(operation.responses.get(String(response.status))?.headers.map((header) => header.name));
  return [...response.headers.keys()].filter((name) => !declared.has(name) && !transportHeaders.has(name));
}

/** Everything in one response that breaks the contract of its operation. */
export function responseProblems(operation: Operation, response: ReceivedResponse, json: unknown): Problem[] {
  const conformance = conformanceProblems(operation, { ...response, ...(json === undefined ? {} : { json }) });
  const contentType = contentTypeProblems(operation, response);
  return [
    ...contentType,
    // With the wrong content type, "not the declared JSON" (or the bytes' own type check) says the same again.
    ...conformance
      .map((message) => ({ check: kindOf(message), message }))
      .filter(
        (problem) =>
          contentType.length === 0 ||
          (problem.check !== 'body is not the declared JSON' && problem.check !== 'wrong content type'),
      ),
    ...errorObjectProblems(response, json),
    ...deprecationProblems(operation, response),
  ];
}
