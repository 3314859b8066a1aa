import { essenceOf } from '../../src/openapi/mediaTypes.js';
import type { DeclaredResponse, Operation } from './spec.js';

/** A request as the generators build it: printable, so a counterexample reads as a request. */
export interface TestRequest {
  operationId: string;
  /** Why this request was made, e.g. "valid" or "body name.maxLength". */
  intent: string;
  pathParams: Record<string, string>;
  /** Repeated names are sent repeatedly. */
  query: Array<[string, string]>;
  headers: Record<string, string>;
  /**
   * Raw body text; a body of a bytes media type as its bytes (a Uint8Array, never decoded); `{ bytes }`, text
   * sent as bytes so that fetch sets no Content-Type of its own.
   */
  body?: string | Uint8Array | { bytes: string };
}

/** The body as it goes on the wire: text as text, bytes untouched. */
export function wireBody(body: NonNullable<TestRequest['body']>): string | Uint8Array {
  return typeof body === 'string' || body instanceof Uint8Array ? body : Buffer.from(body.bytes);
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body as received, byte for byte (text is it decoded as UTF-8, which a bytes body need not be). */
  bytes?: Uint8Array;
  /** The parsed JSON body, when there is one. */
  json?: unknown;
}

/**
 * A body declared in a bytes media type: any bytes, in that type (by essence: image/png, not application/json
 * or text), never parsed.
 */
function bytesProblems(declared: DeclaredResponse, response: TestResponse): string[] {
  const contentType = response.headers.get('content-type');
  if (essenceOf(contentType ?? '') === essenceOf(declared.mediaType!)) return [];
  const length = response.bytes?.length ?? Buffer.byteLength(response.text);
  return [
    `Content-Type ${JSON.stringify(contentType)}: status ${response.status} declares ${declared.mediaType} bytes (got ${length} bytes)`,
  ];
}

/**
 * Whether two answers carry the same body: byte for byte when both were kept as bytes (two bodies that are no
 * UTF-8 can decode to the same text), else as text.
 */
export function sameBody(
  first: { text: string; bytes?: Uint8Array },
  second: { text: string; bytes?: Uint8Array },
): boolean {
  if (first.bytes !== undefined && second.bytes !== undefined) return Buffer.compare(first.bytes, second.bytes) === 0;
  return first.text === second.text;
}

/** What in a response breaks the contract of its operation; empty when nothing does. */
export function conformanceProblems(operation: Operation, response: TestResponse): string[] {
  const problems: string[] = [];
  if (response.status >= 500 && response.status !== 503)
    problems.push(`server error ${response.status}: ${response.text}`);
  const declared = operation.responses.get(String(response.status));
  if (!declared) {
    problems.push(
      `status ${response.status} is not declared for ${operation.operationId} (declared: ${[...operation.responses.keys()].join(', ')})`,
    );
    return problems;
  }
  if (declared.kind === 'bytes') problems.push(...bytesProblems(declared, response));
  if (declared.validateBody) {
    if (response.json === undefined) {
      problems.push(
        `status ${response.status} declares a JSON body, got ${JSON.stringify(response.text.slice(0, 200))} (${response.headers.get('content-type')})`,
      );
    } else if (!declared.validateBody(response.json)) {
      problems.push(
        `body does not match the schema of ${response.status}: ${JSON.stringify(declared.validateBody.errors)} in ${response.text.slice(0, 500)}`,
      );
    }
  }
  for (const header of declared.headers) {
    const value = response.headers.get(header.name);
    if (value === null) {
      if (header.required) problems.push(`required header ${header.name} missing`);
      continue;
    }
    const typed = header.schema['type'] === 'integer' && /^-?[0-9]+$/.test(value) ? Number(value) : value;
    if (!header.validate(typed))
      problems.push(
        `header ${header.name}: ${JSON.stringify(value)} does not match its schema: ${JSON.stringify(header.validate.errors)}`,
      );
  }
  if (response.status >= 400 && response.json !== undefined) {
    const status = (response.json as { status?: unknown }).status;
    if (status !== response.status)
      problems.push(`Error.status ${String(status)} differs from the HTTP status ${response.status}`);
  }
  return problems;
}
