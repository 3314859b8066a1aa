/**
 * npm run contract -- changelog [--base FILE] [--head FILE]
 *
 * Prints in Markdown what changed between the last released contract (the
 * highest version under contract/released/) and openapi.yaml: operations,
 * parameters, request bodies, responses and their headers, schemas and
 * deprecations. It describes; the breaking-change gate judges.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { dereference, isObject, same, type Json, type JsonObject } from '../../lib/openapi/dereference.js';
import { httpMethods } from '../../src/openapi/document.js';
import { repoRoot } from '../../lib/repoRoot.js';
import { lastReleased } from './released.js';

// int64 bounds do not fit a double: keep them exact (as text) for the notes.
export const readContractFile = (file: string) =>
  parse(
    readFileSync(file, 'utf8'),
    (_key: unknown, value: unknown) =>
      typeof value === 'bigint' ? (Number.isSafeInteger(Number(value)) ? Number(value) : String(value)) : value,
    { intAsBigInt: true },
  ) as JsonObject;
const objectAt = (value: Json | undefined): JsonObject => (isObject(value) ? value : {});
const code = (text: string) => `\`${text}\``;

/**
 * A JSON value as inline code: a pattern's brackets and parentheses would
 * otherwise read as a Markdown link. The fence is one backtick longer than
 * the longest run inside (CommonMark's rule), padded when it starts or ends with one.
 */
function literal(value: Json | undefined): string {
  const text = JSON.stringify(value);
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const padding = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${padding}${text}${padding}${fence}`;
}

interface Operation {
  key: string;
  operationId: string;
  value: JsonObject;
}

function operationsOf(document: JsonObject): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  for (const [path, item] of Object.entries(objectAt(document['paths']))) {
    for (const method of httpMethods) {
      const operation = objectAt(item)[method];
      if (!isObject(operation)) continue;
      const key = `${method.toUpperCase()} ${path}`;
      operations.set(key, { key, operationId: String(operation['operationId']), value: operation });
    }
  }
  return operations;
}

/** Bounds, enums and formats of a schema, in one line, for "was ... now ..." notes. */
function schemaSummary(schema: Json | undefined): string {
  const value = objectAt(schema);
  const keywords = [
    'type',
    'format',
    'enum',
    'minimum',
    'maximum',
    'minLength',
    'maxLength',
    'minItems',
    'maxItems',
    'pattern',
    'default',
  ];
  const parts = keywords.filter((name) => value[name] !== undefined).map((name) => `${name} ${literal(value[name])}`);
  if (isObject(value['items'])) parts.push(`items: ${schemaSummary(value['items'])}`);
  return parts.join(', ') || 'any';
}

function schemaChanges(before: Json | undefined, after: Json | undefined, where: string, out: string[]): void {
  if (same(before, after)) return;
  const old = objectAt(before);
  const now = objectAt(after);
  const oldProperties = objectAt(old['properties']);
  const newProperties = objectAt(now['properties']);
  const names = new Set([...Object.keys(oldProperties), ...Object.keys(newProperties)]);
  if (names.size > 0) {
    for (const name of names) {
      if (!(name in oldProperties))
        out.push(`${where}: property ${code(name)} added (${schemaSummary(newProperties[name])})`);
      else if (!(name in newProperties)) out.push(`${where}: property ${code(name)} removed`);
      else schemaChanges(oldProperties[name], newProperties[name], `${where}.${name}`, out);
    }
    const oldRequired = JSON.stringify(old['required'] ?? []);
    const newRequired = JSON.stringify(now['required'] ?? []);
    if (oldRequired !== newRequired) out.push(`${where}: required ${oldRequired} → ${newRequired}`);
    return;
  }
  const oldEnum = Array.isArray(old['enum']) ? old['enum'] : undefined;
  const newEnum = Array.isArray(now['enum']) ? now['enum'] : undefined;
  if (oldEnum && newEnum) {
    const added = newEnum.filter((value) => !oldEnum.some((other) => same(value, other)));
    const removed = oldEnum.filter((value) => !newEnum.some((other) => same(value, other)));
    if (added.length > 0) out.push(`${where}: enum values added ${JSON.stringify(added)}`);
    if (removed.length > 0) out.push(`${where}: enum values removed ${JSON.stringify(removed)}`);
  }
  const oldSummary = schemaSummary(before);
  const newSummary = schemaSummary(after);
  if (oldSummary !== newSummary && !(oldEnum && newEnum)) out.push(`${where}: schema ${oldSummary} → ${newSummary}`);
  else if (oldSummary === newSummary && !(oldEnum && newEnum)) out.push(`${where}: description or examples changed`);
}

function parameterKey(parameter: JsonObject): string {
  return `${String(parameter['in'])} parameter ${code(String(parameter['name']))}`;
}

function parameterChanges(before: JsonObject, after: JsonObject, out: string[]): void {
  const list = (operation: JsonObject) =>
    new Map(
      (Array.isArray(operation['parameters']) ? operation['parameters'] : [])
        .filter(isObject)
        .map((parameter) => [parameterKey(parameter), parameter]),
    );
  const old = list(before);
  const now = list(after);
  for (const [key, parameter] of now) {
    const required = parameter['required'] === true ? 'required' : 'optional';
    const previous = old.get(key);
    if (!previous) {
      out.push(`${key} added (${required}; ${schemaSummary(parameter['schema'])})`);
      continue;
    }
    if (previous['required'] !== parameter['required']) out.push(`${key} is now ${required}`);
    schemaChanges(previous['schema'], parameter['schema'], key, out);
  }
  for (const key of old.keys()) if (!now.has(key)) out.push(`${key} removed`);
}

function responseChanges(before: JsonObject, after: JsonObject, out: string[]): void {
  const old = objectAt(before['responses']);
  const now = objectAt(after['responses']);
  // One line per header added to existing responses, naming the statuses.
  const headersAdded = new Map<string, string[]>();
  for (const [status, response] of Object.entries(now)) {
    const previous = old[status];
    const headers = Object.keys(objectAt(objectAt(response)['headers']));
    if (previous === undefined) {
      const schema = objectAt(objectAt(objectAt(objectAt(response)['content'])['application/json'])['schema']);
      const body =
        Object.keys(schema).length > 0
          ? `body ${schemaSummary(schema['properties'] ? { type: 'object' } : schema)}`
          : 'no body';
      out.push(`response ${code(status)} added (${body}; headers: ${headers.join(', ') || 'none'})`);
      continue;
    }
    const oldHeaders = objectAt(objectAt(previous)['headers']);
    const newHeaders = objectAt(objectAt(response)['headers']);
    for (const name of Object.keys(newHeaders)) {
      if (!(name in oldHeaders)) headersAdded.set(name, [...(headersAdded.get(name) ?? []), status]);
      else if (!same(objectAt(oldHeaders[name])['schema'], objectAt(newHeaders[name])['schema']))
        schemaChanges(
          objectAt(oldHeaders[name])['schema'],
          objectAt(newHeaders[name])['schema'],
          `response ${code(status)} header ${code(name)}`,
          out,
        );
    }
    for (const name of Object.keys(oldHeaders))
      if (!(name in newHeaders)) out.push(`response ${code(status)} header ${code(name)} removed`);
    const body = (value: Json | undefined) =>
      objectAt(objectAt(objectAt(value)['content'])['application/json'])['schema'];
    const bodyNotes: string[] = [];
    schemaChanges(body(previous), body(response), `response ${code(status)} body`, bodyNotes);
    out.push(...bodyNotes);
  }
  for (const status of Object.keys(old)) if (!(status in now)) out.push(`response ${code(status)} removed`);
  for (const [name, statuses] of headersAdded)
    out.push(`response header ${code(name)} added to ${statuses.map(code).join(', ')}`);
}

const deprecationFields = ['deprecated', 'x-deprecated-at', 'x-sunset', 'x-replacement', 'x-deprecation-docs'];

function deprecationChanges(before: JsonObject, after: JsonObject, out: string[]): void {
  for (const field of deprecationFields) {
    if (same(before[field], after[field])) continue;
    out.push(`${code(field)}: ${JSON.stringify(before[field] ?? null)} → ${JSON.stringify(after[field] ?? null)}`);
  }
}

function operationChanges(before: Operation, after: Operation): string[] {
  const notes: string[] = [];
  deprecationChanges(before.value, after.value, notes);
  parameterChanges(before.value, after.value, notes);
  const body = (operation: JsonObject) => objectAt(objectAt(operation['requestBody'])['content']);
  for (const [mediaType, content] of Object.entries(body(after.value))) {
    const previous = body(before.value)[mediaType];
    if (previous === undefined) notes.push(`request body ${code(mediaType)} added`);
    else schemaChanges(objectAt(previous)['schema'], objectAt(content)['schema'], 'request body', notes);
  }
  responseChanges(before.value, after.value, notes);
  extensionChanges(before.value, after.value, notes);
  if (!same(before.value['description'], after.value['description'])) notes.push('description changed');
  return notes;
}

/** The operation's other extensions (`x-slo`, `x-stability`, ...): what they say is part of the contract too. */
function extensionChanges(before: JsonObject, after: JsonObject, out: string[]): void {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const name of [...names].sort()) {
    if (!name.startsWith('x-') || deprecationFields.includes(name) || same(before[name], after[name])) continue;
    out.push(`${code(name)}: ${literal(before[name] ?? null)} → ${literal(after[name] ?? null)}`);
  }
}

const firstSentence = (text: Json | undefined) =>
  (
    /^[^.]*\.?/.exec(
      String(text ?? '')
        .replace(/\s+/g, ' ')
        .trim(),
    )?.[0] ?? ''
  ).trim();

function schemaSection(before: JsonObject, after: JsonObject): string[] {
  const old = objectAt(objectAt(before['components'])['schemas']);
  const now = objectAt(objectAt(after['components'])['schemas']);
  const lines: string[] = [];
  for (const [name, schema] of Object.entries(now)) {
    if (!(name in old)) {
      lines.push(`- ${code(name)} added: ${firstSentence(objectAt(schema)['description'])}`);
      continue;
    }
    const notes: string[] = [];
    schemaChanges(old[name], schema, name, notes);
    lines.push(...notes.map((note) => `- ${note}`));
  }
  for (const name of Object.keys(old)) if (!(name in now)) lines.push(`- ${code(name)} removed`);
  return lines;
}

const versionOf = (document: JsonObject) => String(objectAt(document['info'])['version']);

/** A changelog section: its heading, then changes(). */
export function changelog(beforeRaw: JsonObject, afterRaw: JsonObject): string {
  return `## ${versionOf(afterRaw)}\n\n${changes(beforeRaw, afterRaw)}`;
}

/** What changed from one contract to the next, as the Markdown entries of a changelog section. */
export function changes(beforeRaw: JsonObject, afterRaw: JsonObject): string {
  const before = dereference(beforeRaw);
  const after = dereference(afterRaw);
  const oldOperations = operationsOf(before);
  const newOperations = operationsOf(after);
  const out = [`Changes to the contract since ${versionOf(beforeRaw)}.`, ''];

  const added = [...newOperations.values()].filter((operation) => !oldOperations.has(operation.key));
  const removed = [...oldOperations.values()].filter((operation) => !newOperations.has(operation.key));
  const deprecated = [...newOperations.values()].filter(
    (operation) =>
      operation.value['deprecated'] === true && oldOperations.get(operation.key)?.value['deprecated'] !== true,
  );
  out.push('### Operations', '');
  if (added.length + removed.length + deprecated.length === 0) out.push('No operation added, removed or deprecated.');
  for (const operation of added) out.push(`- Added ${code(operation.key)} (${operation.operationId}).`);
  for (const operation of removed) out.push(`- Removed ${code(operation.key)} (${operation.operationId}).`);
  for (const operation of deprecated)
    out.push(
      `- Deprecated ${code(operation.key)} (${operation.operationId}), sunset ${String(operation.value['x-sunset'])}.`,
    );
  out.push('');

  for (const [key, operation] of newOperations) {
    const previous = oldOperations.get(key);
    if (!previous) continue;
    const notes = operationChanges(previous, operation);
    if (notes.length === 0) continue;
    out.push(`### ${code(key)} (${operation.operationId})`, '', ...notes.map((note) => `- ${note}`), '');
  }

  const schemas = schemaSection(beforeRaw, afterRaw);
  out.push('### Schemas', '', ...(schemas.length > 0 ? schemas : ['No schema changed.']), '');
  return `${out.join('\n').trimEnd()}\n`;
}

function main(): void {
  const { values } = parseArgs({ options: { base: { type: 'string' }, head: { type: 'string' } } });
  const base = values.base ?? lastReleased();
  const head = values.head ?? join(repoRoot, 'openapi.yaml');
  process.stdout.write(changelog(readContractFile(base), readContractFile(head)));
  process.stderr.write(`(compared ${relative(repoRoot, head)} with ${relative(repoRoot, base)})\n`);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ''))) main();
