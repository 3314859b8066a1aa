// The TypeScript client's generated files, as text, from its operations (clientOperations.ts): the types
// (schemas, queries, keyed options), the operation table the transport reads, the class of one method per
// operationId that PetStore extends, and the README's table of methods.
import { codecOf, type Codec } from '../clients/typescript/src/mediaTypes.js';
import { pagesMethodName, type ClientOperation } from './clientOperations.js';

export const generatedBy = '// Generated from openapi.yaml by npm run generate (generators/client.ts): never edit.\n';

const pascal = (name: string) => `${name.charAt(0).toUpperCase()}${name.slice(1)}`;
const quoted = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const docText = (text: string) => text.replace(/\*\//g, '*\\/');

export const queryTypeName = (operation: ClientOperation) => `${pascal(operation.operationId)}Query`;
export const resultTypeName = (operation: ClientOperation) => `${pascal(operation.operationId)}Result`;
/** Whether the caller must name the body's media type: the operation declares several. */
const picksContentType = (operation: ClientOperation) => (operation.body?.mediaTypes.length ?? 0) > 1;
/** Whether its options argument may be left out: nothing in it is required. */
const optionsOptional = (operation: ClientOperation) => operation.headers.length === 0 && !picksContentType(operation);
const hasOwnOptions = (operation: ClientOperation) =>
  operation.idempotencyKey ||
  operation.headers.length > 0 ||
  operation.optionalHeaders.length > 0 ||
  picksContentType(operation);
export const optionsTypeName = (operation: ClientOperation) =>
  hasOwnOptions(operation) ? `${pascal(operation.operationId)}Options` : 'CallOptions';

/** The option types an operation's own options build on. */
function optionBases(operations: ClientOperation[]): string[] {
  const bases = new Set(
    operations
      .filter(hasOwnOptions)
      .map((operation) => (operation.idempotencyKey ? 'KeyedCallOptions' : 'CallOptions')),
  );
  return [...bases].sort();
}

/** The types file: every schema under its name, each operation's query object, its options if its own. */
/**
 * The schemas that are only a `$ref` to another schema, each with the name it points to: a former name kept so code
 * that names it still compiles (docs/contract.md, "The version step").
 */
export function formerNames(schemas: Record<string, unknown>): Map<string, string> {
  const prefix = '#/components/schemas/';
  return new Map(
    Object.entries(schemas).flatMap(([name, schema]) => {
      const ref = (schema as { $ref?: unknown } | null)?.$ref;
      const bare = typeof schema === 'object' && schema !== null && Object.keys(schema).length === 1;
      return bare && typeof ref === 'string' && ref.startsWith(prefix) ? [[name, ref.slice(prefix.length)]] : [];
    }),
  );
}

export function typesSource(
  schemaNames: string[],
  operations: ClientOperation[],
  formers: ReadonlyMap<string, string> = new Map(),
): string {
  const bases = optionBases(operations);
  const generatedTypes = [
    ...(schemaNames.length > 0 ? ['components'] : []),
    ...(operations.some(
      (operation) =>
        operation.query !== undefined || operation.headers.length > 0 || operation.optionalHeaders.length > 0,
    )
      ? ['operations']
      : []),
  ];
  const lines = [
    generatedBy,
    "import type { Answered } from '../callPromise.js';",
    ...(bases.length > 0 ? [`import type { ${bases.join(', ')} } from '../operationSpec.js';`] : []),
    `import type { ${[...new Set([...generatedTypes, 'operations'])].join(', ')} } from './api.js';`,
    '',
  ];
  for (const name of schemaNames) {
    const current = formers.get(name);
    if (current !== undefined) lines.push(`/** @deprecated The former name of ${current}: use ${current}. */`);
    lines.push(`export type ${name} = components['schemas'][${quoted(name)}];`);
  }
  for (const operation of operations) {
    const id = quoted(operation.operationId);
    lines.push('', ...resultTypeSource(operation));
    if (operation.query !== undefined) {
      lines.push('', `/** The query of ${operation.operationId}. */`);
      lines.push(`export type ${queryTypeName(operation)} = NonNullable<operations[${id}]['parameters']['query']>;`);
    }
    if (!hasOwnOptions(operation)) continue;
    const base = operation.idempotencyKey ? 'KeyedCallOptions' : 'CallOptions';
    const declares = [
      ...(operation.idempotencyKey ? ['Idempotency-Key'] : []),
      ...(picksContentType(operation) ? [`a body in ${operation.body?.mediaTypes.join(' or ')}`] : []),
      ...(operation.headers.length > 0 ? [`the required headers (${operation.headers.join(', ')})`] : []),
      ...(operation.optionalHeaders.length > 0
        ? [`the optional headers (${operation.optionalHeaders.map(({ header }) => header).join(', ')})`]
        : []),
    ];
    lines.push('', `/** The options of ${operation.operationId}, which declares ${declares.join(' and ')}. */`);
    const declared = `NonNullable<operations[${id}]['parameters']['header']>`;
    const parts = [base];
    if (operation.headers.length > 0)
      parts.push(`{ headers: Pick<${declared}, ${operation.headers.map(quoted).join(' | ')}> }`);
    if (operation.optionalHeaders.length > 0) {
      const members = operation.optionalHeaders.map(
        ({ header, option }) => `  /** Sent as ${header}. */\n  ${option}?: ${declared}[${quoted(header)}];`,
      );
      parts.push(`{\n${members.join('\n')}\n}`);
    }
    if (picksContentType(operation))
      parts.push(
        `{\n  /** The body's media type, sent as Content-Type. */\n  contentType: ${(operation.body?.mediaTypes ?? []).map(quoted).join(' | ')};\n}`,
      );
    lines.push(`export type ${optionsTypeName(operation)} = ${parts.join(' & ')};`);
  }
  return `${lines.join('\n')}\n`;
}

/** A 2xx status's entry of the operation table: its media types and its headers' types. */
function successEntry({ status, mediaTypes, headers }: ClientOperation['success'][number]): string {
  const parts = [];
  if (mediaTypes.length > 0) parts.push(`content: [${mediaTypes.map(quoted).join(', ')}]`);
  if (headers.length > 0) {
    const entries = headers.map(
      ({ name, type, required }) => `${quoted(name)}: { type: '${type}'${required ? ', required: true' : ''} }`,
    );
    parts.push(`headers: { ${entries.join(', ')} }`);
  }
  return `${status}: { ${parts.join(', ')} }`;
}

function tableEntry(operation: ClientOperation): string {
  const success = operation.success.map(successEntry).join(', ');
  return [
    `  ${operation.operationId}: {`,
    `    method: '${operation.method}',`,
    `    path: ${quoted(operation.path)},`,
    `    query: [${(operation.query?.names ?? []).map(quoted).join(', ')}],`,
    ...(operation.accept === undefined ? [] : [`    accept: ${quoted(operation.accept)},`]),
    ...(operation.body === undefined ? [] : [`    body: [${operation.body.mediaTypes.map(quoted).join(', ')}],`]),
    `    idempotencyKey: ${operation.idempotencyKey},`,
    ...(operation.headers.length === 0 ? [] : [`    headers: [${operation.headers.map(quoted).join(', ')}],`]),
    ...(operation.optionalHeaders.length === 0
      ? []
      : [
          `    optionalHeaders: { ${operation.optionalHeaders.map(({ header, option }) => `${option}: ${quoted(header)}`).join(', ')} },`,
        ]),
    ...(operation.notModified ? ['    notModified: true,'] : []),
    `    success: { ${success} },`,
    '  },',
  ].join('\n');
}

/** The type of a body in one media type, by its codec: the schema's for JSON, Uint8Array for bytes, string for text. */
function dataType(codec: Codec | undefined, schemaType: string, bytesIn: string): string {
  if (codec === 'bytes') return bytesIn;
  if (codec === 'text') return 'string';
  return schemaType;
}

/** A 2xx answer's body type: the union over its media types (undefined without a body). */
function answerData(operation: ClientOperation, { status, mediaTypes }: ClientOperation['success'][number]): string {
  const id = quoted(operation.operationId);
  const types = mediaTypes.map((type) =>
    dataType(codecOf(type), `operations[${id}]['responses'][${status}]['content'][${quoted(type)}]`, 'Uint8Array'),
  );
  return types.length === 0 ? 'undefined' : [...new Set(types)].join(' | ');
}

/** The type withResponse() resolves with: one Answered per declared 2xx status, with its declared headers. */
function resultTypeSource(operation: ClientOperation): string[] {
  const id = quoted(operation.operationId);
  const members = operation.success.map((success) => {
    const names = success.headers.map(({ name }) => quoted(name)).join(' | ');
    const headers =
      names === ''
        ? 'Record<never, never>'
        : `Pick<operations[${id}]['responses'][${success.status}]['headers'], ${names}>`;
    return `  | Answered<${success.status}, ${answerData(operation, success)}, ${headers}>`;
  });
  return [
    `/** What ${operation.operationId}(...).withResponse() resolves with: one member per 2xx status it declares. */`,
    `export type ${resultTypeName(operation)} =`,
    ...members.map((member, index) => (index === members.length - 1 ? `${member};` : member)),
  ];
}

function pageType(operation: ClientOperation): string {
  return [
    ...new Set(
      operation.success
        .filter(({ mediaTypes }) => mediaTypes.length > 0)
        .map((success) => answerData(operation, success)),
    ),
  ].join(' | ');
}

/** The parameters of an operation's method, in order: path parameters, body, query, options. */
function parameterList(operation: ClientOperation): string[] {
  const id = quoted(operation.operationId);
  const list = operation.pathParameters.map(
    (name) => `${name}: operations[${id}]['parameters']['path'][${quoted(name)}]`,
  );
  if (operation.body !== undefined) {
    const { codec, mediaTypes } = operation.body;
    const types = mediaTypes.map((type) =>
      dataType(codec, `NonNullable<operations[${id}]['requestBody']>['content'][${quoted(type)}]`, 'Uint8Array | Blob'),
    );
    const type = [...new Set(types)].join(' | ');
    list.push(operation.body.required ? `body: ${type}` : `body?: ${type}`);
  }
  if (operation.query !== undefined)
    list.push(`query: ${queryTypeName(operation)}${operation.query.required ? '' : ' = {}'}`);
  list.push(`options: ${optionsTypeName(operation)}${optionsOptional(operation) ? ' = {}' : ''}`);
  return list;
}

function requestObject(operation: ClientOperation): string {
  const parts: string[] = [];
  if (operation.pathParameters.length > 0) parts.push(`path: { ${operation.pathParameters.join(', ')} }`);
  if (operation.body !== undefined) parts.push('body');
  if (operation.query !== undefined) parts.push('query');
  parts.push('options');
  return `{ ${parts.join(', ')} }`;
}

function retryNote(operation: ClientOperation): string {
  if (['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'].includes(operation.method))
    return `Retried after a lost connection or a retryable answer (${operation.method} is idempotent).`;
  if (operation.idempotencyKey)
    return 'Retried after a lost connection or a retryable answer, with the same Idempotency-Key on every attempt (`options.idempotencyKey`, else a new random UUID per call): the service applies it once.';
  return `Never retried: a ${operation.method} without an Idempotency-Key could take effect twice.`;
}

function deprecationNote(operation: ClientOperation): string[] {
  const deprecation = operation.deprecation;
  if (deprecation === undefined) return [];
  const sunset = deprecation.sunset === undefined ? undefined : new Date(deprecation.sunset).toUTCString();
  const when = sunset === undefined ? 'The service deprecated it' : `The service removes it at its sunset (${sunset})`;
  const after = deprecation.gone
    ? '; after it, calls fail with PetStoreError 410 `gone` whose `successor` names the replacement'
    : '';
  const href = deprecation.replacementHref === undefined ? '' : ` (\`${deprecation.replacementHref}\`)`;
  const instead = deprecation.replacement === undefined ? '' : ` Use \`${deprecation.replacement}\`${href} instead.`;
  return [`@deprecated ${when}${after}.${instead}`];
}

function jsDoc(lines: string[]): string[] {
  return ['  /**', ...lines.flatMap((line) => docText(line).split('\n')).map((line) => `   * ${line}`), '   */'];
}

function methodSource(operation: ClientOperation): string[] {
  const id = operation.operationId;
  const doc = jsDoc([
    `${operation.summary}: \`${operation.method} ${operation.path}\`.`,
    `Resolves with the answer's body; \`.withResponse()\` with its status, declared headers and body too (${resultTypeName(operation)}).`,
    retryNote(operation),
    ...(operation.notModified
      ? ['With `ifNoneMatch` holding its current ETag, rejects with PetStoreError 304 `not_modified`.']
      : []),
    ...deprecationNote(operation),
    `@throws {PetStoreError<'${id}'>} for an error answer (\`PetStoreError.is(error, '${id}')\` narrows it)`,
  ]);
  const method = [
    ...doc,
    `  ${id}(${parameterList(operation).join(', ')}): CallPromise<${resultTypeName(operation)}> {`,
    `    return this.sendOperation('${id}', ${requestObject(operation)}) as CallPromise<${resultTypeName(operation)}>;`,
    '  }',
  ];
  if (!operation.pages) return method;
  const pages = [
    ...jsDoc([
      `Every page of ${id}, one after the other: follows each answer's \`Link: <…>; rel="next"\` (to baseUrl's origin only) and stops on the page without one. Each page is one call, with its own deadline and retries.`,
      ...deprecationNote(operation),
      `@throws {PetStoreError<'${id}'>} for an error answer`,
    ]),
    `  ${pagesMethodName(operation)}(${parameterList(operation).join(', ')}): AsyncGenerator<${pageType(operation)}, void, undefined> {`,
    `    return this.walkOperation('${id}', ${requestObject(operation)}) as AsyncGenerator<${pageType(operation)}, void, undefined>;`,
    '  }',
  ];
  return [...method, '', ...pages];
}

/** The operations file: the table the transport reads, and the class of one method per operationId. */
export function operationsSource(operations: ClientOperation[]): string {
  const typeImports = [
    ...operations.filter(hasOwnOptions).map(optionsTypeName),
    ...operations.filter((operation) => operation.query !== undefined).map(queryTypeName),
    ...operations.map(resultTypeName),
  ];
  const lines = [
    generatedBy,
    "import type { Answered, CallPromise } from '../callPromise.js';",
    `import type { ${operations.every(hasOwnOptions) ? '' : 'CallOptions, '}OperationRequest, OperationSpec } from '../operationSpec.js';`,
    "import type { operations } from './api.js';",
    ...(typeImports.length === 0 ? [] : [`import type { ${[...new Set(typeImports)].join(', ')} } from './types.js';`]),
    '',
    '/** Each operation of the contract as the transport sends it. */',
    'export const operationTable = {',
    ...operations.map(tableEntry),
    '} as const satisfies Record<keyof operations, OperationSpec>;',
    '',
    '/**',
    ' * One method per operationId of the contract: path parameters in path order, then the body, then the',
    ' * query, then the call options. The transport (PetStore) sends each call.',
    ' */',
    'export abstract class PetStoreOperations {',
    "  /** Sends one call of an operation; resolves with its answer's body (undefined without one), withResponse() with all of it. */",
    '  protected abstract sendOperation(operation: keyof operations, request: OperationRequest): CallPromise<Answered>;',
    '',
    '  /** Walks an operation\'s pages: each answer\'s body, following Link rel="next". */',
    '  protected abstract walkOperation(operation: keyof operations, request: OperationRequest): AsyncGenerator<unknown, void, undefined>;',
    '',
    ...operations.flatMap((operation, index) => [...(index > 0 ? [''] : []), ...methodSource(operation)]),
    '}',
  ];
  return `${lines.join('\n')}\n`;
}

/** The README's table of methods, one row per method. */
export function methodTable(operations: ClientOperation[]): string {
  const rows = ['| Method | Resolves with | Operation | Retried |', '|---|---|---|---|'];
  const result = (operation: ClientOperation) =>
    operation.success
      .flatMap(({ mediaTypes, schemaName }) =>
        mediaTypes.length === 0
          ? ['nothing']
          : mediaTypes.map((type) => `\`${dataType(codecOf(type), schemaName ?? 'JSON', 'Uint8Array')}\``),
      )
      .filter((name, index, all) => all.indexOf(name) === index)
      .join(' or ');
  const signature = (operation: ClientOperation, name: string) => {
    const parts = [...operation.pathParameters];
    if (operation.body !== undefined) parts.push(operation.body.required ? 'body' : 'body?');
    if (operation.query !== undefined) parts.push(operation.query.required ? 'query' : 'query?');
    const options = [
      ...(operation.headers.length > 0 ? ['headers'] : []),
      ...(operation.idempotencyKey ? ['idempotencyKey?'] : []),
      ...(picksContentType(operation) ? ['contentType'] : []),
      ...operation.optionalHeaders.map(({ option }) => `${option}?`),
      'signal?',
    ];
    parts.push(`{ ${options.join(', ')} }${optionsOptional(operation) ? '?' : ''}`);
    return `\`${name}(${parts.join(', ')})\``;
  };
  for (const operation of operations) {
    const retried = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'].includes(operation.method)
      ? 'yes'
      : operation.idempotencyKey
        ? 'yes, under its Idempotency-Key'
        : 'no';
    const deprecated =
      operation.deprecation === undefined || /deprecated/i.test(operation.summary) ? '' : ' (deprecated)';
    const what = `\`${operation.method} ${operation.path}\`: ${operation.summary}${deprecated}`;
    rows.push(`| ${signature(operation, operation.operationId)} | ${result(operation)} | ${what} | ${retried} |`);
    if (operation.pages)
      rows.push(
        `| ${signature(operation, pagesMethodName(operation))} | its pages, as an async iterable | every page of \`${operation.operationId}\` | each page |`,
      );
  }
  return rows.join('\n');
}
