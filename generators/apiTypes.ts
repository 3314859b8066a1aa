// npm run generate: src/generated/api.ts, the TypeScript types of openapi.yaml, made by openapi-typescript
// from a typing view of the spec (typingView), after refusing a body schema it would type as `unknown`
// (untypedBodies). Arguments: the spec and the file to write (default openapi.yaml, src/generated/api.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { parse } from 'yaml';
import { isObject, type Json, type JsonObject } from '../lib/openapi/dereference.js';
import { isMainModule } from '../src/entryPoint.js';

/** Keywords that only constrain an object whose properties another part of the schema names. */
const constraintOnly = new Set(['required', 'description', 'title']);

function isRequiredOnly(branch: Json): branch is JsonObject {
  return isObject(branch) && Object.keys(branch).every((key) => constraintOnly.has(key));
}

/**
 * An object schema whose `anyOf` or `oneOf` branches only require fields of its own properties (a field
 * renamed the usual way: either the old or the new one required) as one object per branch, its own required
 * fields and the branch's together: openapi-typescript types each branch `unknown`, which swallows the union.
 */
function distributed(schema: JsonObject): JsonObject {
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword];
    if (!Array.isArray(branches) || branches.length === 0 || !branches.every(isRequiredOnly)) continue;
    if (!isObject(schema['properties'])) continue;
    const { [keyword]: _branches, description, title, ...base } = schema;
    const own = Array.isArray(base['required']) ? base['required'] : [];
    return {
      ...(description === undefined ? {} : { description }),
      ...(title === undefined ? {} : { title }),
      [keyword]: branches.map((branch) => ({
        ...base,
        required: [...new Set([...own, ...(Array.isArray(branch['required']) ? branch['required'] : [])])],
      })),
    };
  }
  return schema;
}

/** The spec as openapi-typescript is given it: every schema rewritten by `distributed`, nothing else changed. */
export function typingView(node: Json): Json {
  if (Array.isArray(node)) return node.map(typingView);
  if (!isObject(node)) return node;
  const walked = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, typingView(value)]));
  return distributed(walked);
}

const pointer = (path: readonly string[]) => path.map((key) => key.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/**
 * The schemas under `path` openapi-typescript would type as `unknown`, as JSON pointers: one that names no
 * type (`{}`, only `not`, only constraints), a union with such a branch (it swallows the union), an
 * intersection of nothing typed; and the same for its properties and items.
 */
function untypedIn(document: JsonObject, schema: Json | undefined, path: string[], seen: Set<string>): string[] {
  if (!isObject(schema)) return [`#/${pointer(path)}`];
  const ref = schema['$ref'];
  if (typeof ref === 'string') {
    if (seen.has(ref)) return [];
    seen.add(ref);
    const target = ref
      .slice(2)
      .split('/')
      .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
    const resolved = target.reduce<Json | undefined>((at, key) => (isObject(at) ? at[key] : undefined), document);
    return untypedIn(document, resolved, target, seen);
  }
  const found: string[] = [];
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches))
      branches.forEach((branch, index) =>
        found.push(...untypedIn(document, branch, [...path, keyword, String(index)], seen)),
      );
  }
  const allOf = Array.isArray(schema['allOf']) ? schema['allOf'] : [];
  const typedHere =
    ['type', 'enum', 'const', 'properties', 'items', 'anyOf', 'oneOf'].some((key) => key in schema) ||
    allOf.some(
      (branch, index) => untypedIn(document, branch, [...path, 'allOf', String(index)], new Set(seen)).length === 0,
    );
  if (!typedHere) return [`#/${pointer(path)}`];
  if (isObject(schema['properties']))
    for (const [name, property] of Object.entries(schema['properties']))
      found.push(...untypedIn(document, property, [...path, 'properties', name], seen));
  if (schema['items'] !== undefined) found.push(...untypedIn(document, schema['items'], [...path, 'items'], seen));
  return found;
}

/** Every request and response body schema of the document that would be typed `unknown`, by JSON pointer. */
export function untypedBodies(document: JsonObject): string[] {
  const found = new Set<string>();
  const seen = new Set<string>();
  const visitContent = (content: Json | undefined, path: string[]) => {
    if (!isObject(content)) return;
    for (const [mediaType, media] of Object.entries(content))
      if (isObject(media) && media['schema'] !== undefined)
        for (const untyped of untypedIn(document, media['schema'], [...path, 'content', mediaType, 'schema'], seen))
          found.add(untyped);
  };
  const resolve = (node: Json | undefined): Json | undefined => {
    const ref = isObject(node) ? node['$ref'] : undefined;
    if (typeof ref !== 'string') return node;
    return ref
      .slice(2)
      .split('/')
      .reduce<Json | undefined>((at, key) => (isObject(at) ? at[key] : undefined), document);
  };
  for (const [route, item] of Object.entries(isObject(document['paths']) ? document['paths'] : {})) {
    if (!isObject(item)) continue;
    for (const [method, operation] of Object.entries(item)) {
      if (!isObject(operation)) continue;
      const at = ['paths', route, method];
      const body = resolve(operation['requestBody']);
      if (isObject(body)) visitContent(body['content'], [...at, 'requestBody']);
      for (const [status, response] of Object.entries(isObject(operation['responses']) ? operation['responses'] : {})) {
        const resolved = resolve(response);
        if (isObject(resolved)) visitContent(resolved['content'], [...at, 'responses', status]);
      }
    }
  }
  return [...found];
}

/** api.ts for a spec: openapi-typescript's output for its typing view, or an error naming each untyped body schema. */
export async function apiTypesSource(spec: JsonObject): Promise<string> {
  const view = typingView(spec) as JsonObject;
  const untyped = untypedBodies(view);
  if (untyped.length > 0)
    throw new Error(
      `openapi: these body schemas would be typed unknown, so the server's handlers and the client would check nothing: ${untyped.join(', ')}. Give each a type (type, properties, enum, a $ref...).`,
    );
  return `${COMMENT_HEADER}${astToString(await openapiTS(view as never))}`;
}

if (isMainModule(import.meta.url)) {
  const [specFile = 'openapi.yaml', outFile = 'src/generated/api.ts'] = process.argv.slice(2);
  writeFileSync(outFile, await apiTypesSource(parse(readFileSync(specFile, 'utf8')) as JsonObject));
}
