import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  entityTagOf,
  evaluateConditions,
  parseEntityTagList,
  type EntityTagConditions,
  type EntityTagList,
  type Precondition,
} from '../../entityTags.js';
import { ApiError, type ErrorCode } from '../../errors.js';
import type { OpenApiDocument, OperationObject, ResponseObject, RouteEntry } from '../../openapi/document.js';

type Serialize = (document: unknown) => string;

/**
 * What an operation's spec says about entity tags, read once at start:
 * which successes carry an ETag, whether a GET may answer 304, and, when it
 * declares a 412, the code of that Error object and the schema of the
 * representation a precondition is checked against.
 */
export interface ConditionalFacts {
  operationId: string;
  /** The 2xx statuses whose response declares ETag: their answers carry one, over the bytes answered. */
  taggedStatuses: ReadonlySet<number>;
  notModified: boolean;
  /** Present when the operation declares 412: If-Match and If-None-Match are honoured for its method. */
  preconditions:
    | {
        code: ErrorCode;
        /** The JSON schema the target's representation is serialized by (its GET's, or the operation's own success). */
        representation: { status: number; schema: object };
      }
    | undefined;
}

const responseRef = /^#\/components\/responses\/([^/]+)$/;

/** A response of an operation, with a reference to components/responses resolved. */
export function responseOf(spec: OpenApiDocument, response: ResponseObject | undefined): ResponseObject | undefined {
  if (response?.$ref === undefined) return response;
  const name = responseRef.exec(response.$ref)?.[1];
  return name === undefined ? undefined : spec.components.responses?.[name];
}

function jsonSchemaOf(route: RouteEntry | undefined, status: number): object | undefined {
  const responses = route?.schema['response'] as Record<string, { content?: Record<string, { schema?: object }> }>;
  return responses[String(status)]?.content?.['application/json']?.schema;
}

function taggedStatusesOf(spec: OpenApiDocument, operation: OperationObject): number[] {
  return Object.entries(operation.responses ?? {})
    .filter(([status, response]) => /^2\d\d$/.test(status) && responseOf(spec, response)?.headers?.['ETag'])
    .map(([status]) => Number(status))
    .sort((a, b) => a - b);
}

/** The code of the operation's 412 Error object: the one its schema allows, or `precondition_failed` among several. */
function preconditionCodeOf(route: RouteEntry): ErrorCode {
  const schema = jsonSchemaOf(route, 412) as
    { properties?: { code?: { enum?: string[]; const?: string } } } | undefined;
  const code = schema?.properties?.code;
  const codes = code?.const === undefined ? (code?.enum ?? []) : [code.const];
  const chosen = codes.length === 1 ? codes[0] : codes.find((value) => value === 'precondition_failed');
  if (chosen === undefined)
    throw new Error(
      `openapi.yaml: ${route.operationId}'s 412 must allow one code (or precondition_failed among them), ` +
        `not [${codes.join(', ')}]`,
    );
  return chosen as ErrorCode;
}

/**
 * The operation's conditional facts, or undefined when it has none. A
 * precondition is checked against the representation a GET of the same path
 * answers (its 200 with an ETag), else the operation's own first tagged
 * success: a DELETE with If-Match compares with what GET tagged.
 */
export function conditionalFactsOf(
  spec: OpenApiDocument,
  operation: OperationObject,
  route: RouteEntry,
  routes: readonly RouteEntry[],
): ConditionalFacts | undefined {
  const taggedStatuses = taggedStatusesOf(spec, operation);
  const notModified = operation.responses?.['304'] !== undefined && taggedStatuses.length > 0;
  const declares412 = operation.responses?.['412'] !== undefined;
  if (taggedStatuses.length === 0 && !declares412) return undefined;
  let preconditions: ConditionalFacts['preconditions'];
  if (declares412) {
    const get = routes.find((other) => other.method === 'GET' && other.url === route.url);
    const getOperation = get && Object.values(spec.paths).find((item) => item['get']?.operationId === get.operationId);
    const getTagged = getOperation?.['get'] && taggedStatusesOf(spec, getOperation['get']).includes(200);
    const [source, status] = getTagged ? [get, 200] : [route, taggedStatuses[0]];
    const schema = status === undefined ? undefined : jsonSchemaOf(source, status);
    if (schema === undefined)
      throw new Error(
        `openapi.yaml: ${operation.operationId} declares 412, but neither it nor a GET of its path ` +
          'answers a JSON body with an ETag to compare with',
      );
    preconditions = { code: preconditionCodeOf(route), representation: { status: status as number, schema } };
  }
  return { operationId: operation.operationId, taggedStatuses: new Set(taggedStatuses), notModified, preconditions };
}

const isSafe = (method: string) => method === 'GET' || method === 'HEAD';

/**
 * A field the operation honours, read: a malformed one (not `*` nor a list
 * of entity tags) is a 400 before anything is evaluated or written, on every
 * method. Ignoring what cannot be read would fail open: `garbage` in
 * If-None-Match matches nothing, so a write would go ahead.
 */
function entityTagListOf(name: string, field: string): EntityTagList {
  const list = parseEntityTagList(field);
  if (list === undefined)
    throw new ApiError(
      400,
      'invalid_request',
      `The ${name} header is not * nor a comma-separated list of entity tags ("..." or W/"...").`,
    );
  return list;
}

/**
 * Before its handler runs, a request to an operation with entity tags (an
 * ETag or a 412) that sends a malformed If-Match or If-None-Match is a 400,
 * whether the operation evaluates that field for this method or not: a
 * client that meant a condition is never answered as if it had sent none.
 */
export function refuseMalformedConditions(request: FastifyRequest): void {
  const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = request.headers;
  if (typeof ifMatch === 'string') entityTagListOf('If-Match', ifMatch);
  if (typeof ifNoneMatch === 'string') entityTagListOf('If-None-Match', ifNoneMatch);
}

/** The request's If-Match and If-None-Match, as far as the operation honours them; undefined when it sent neither. */
function conditionsOf(request: FastifyRequest, facts: ConditionalFacts): EntityTagConditions | undefined {
  const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = request.headers;
  const honoursMatch = facts.preconditions !== undefined && typeof ifMatch === 'string';
  const honoursNoneMatch =
    typeof ifNoneMatch === 'string' &&
    (facts.preconditions !== undefined || (facts.notModified && isSafe(request.method)));
  if (!honoursMatch && !honoursNoneMatch) return undefined;
  return {
    ifMatch: honoursMatch ? entityTagListOf('If-Match', ifMatch) : undefined,
    ifNoneMatch: honoursNoneMatch ? entityTagListOf('If-None-Match', ifNoneMatch) : undefined,
  };
}

function preconditionFailed(facts: ConditionalFacts): ApiError {
  return new ApiError(
    412,
    facts.preconditions?.code ?? 'invalid_request',
    'The resource does not match If-Match or If-None-Match (RFC 9110, 13.1): read it again for its current ETag.',
  );
}

/**
 * A success's entity tag, set on the reply, over the bytes it answers and
 * the handler's own Link (`link`: a page that gained a next page has
 * changed), and for a GET or HEAD the outcome of the request's conditions
 * against it: true when the answer is a 304 without a body. Headers the
 * HTTP layer adds (a deprecation's Link) are not the representation's and
 * stay out, so a write's precondition, which tags the representation alone
 * (preconditionFor), compares with the very tag GET answered. A failed
 * If-Match is the operation's 412.
 */
export function tagged(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: string | Uint8Array,
  facts: ConditionalFacts,
  link: string | undefined,
): boolean {
  const tag = entityTagOf(payload, link);
  const conditions = isSafe(request.method) ? conditionsOf(request, facts) : undefined;
  const outcome = conditions === undefined ? 'met' : evaluateConditions(conditions, tag, true);
  // The 412 is an Error object: it tells nothing of the representation, its tag included.
  if (outcome === 'failed' || (outcome === 'not_modified' && !facts.notModified)) throw preconditionFailed(facts);
  reply.header('etag', tag);
  return outcome === 'not_modified';
}

/** A write's precondition as its handler checks it, and whether it was checked. */
export interface CheckedPrecondition {
  precondition: Precondition<unknown>;
  /** The request sent a condition the handler never evaluated. */
  unchecked(): boolean;
}

/**
 * The precondition handed to a handler of an operation that declares 412:
 * the request's conditions, checked against a representation the handler
 * passes, serialized by the same schema and tagged by the same function as a
 * GET answer of it. For GET and HEAD the answer itself is checked (tagged),
 * so there the handler may ignore it.
 */
export function preconditionFor(
  request: FastifyRequest,
  reply: FastifyReply,
  facts: ConditionalFacts,
): CheckedPrecondition | undefined {
  const declared = facts.preconditions;
  if (declared === undefined) return undefined;
  const conditions = conditionsOf(request, facts) ?? { ifMatch: undefined, ifNoneMatch: undefined };
  const sent = conditions.ifMatch !== undefined || conditions.ifNoneMatch !== undefined;
  let evaluated = false;
  const { schema, status } = declared.representation;
  // fastify caches what it compiles per schema object: compiled once per route, on first use.
  const tagOf = (representation: unknown) =>
    entityTagOf(
      (reply.compileSerializationSchema(schema as Record<string, unknown>, String(status)) as Serialize)(
        representation,
      ),
    );
  return {
    precondition: {
      ...conditions,
      tagOf,
      isMetBy(current) {
        evaluated = true;
        if (!sent) return true;
        return evaluateConditions(conditions, current === undefined ? undefined : tagOf(current), false) === 'met';
      },
    },
    unchecked: () => sent && !evaluated && !isSafe(request.method),
  };
}
