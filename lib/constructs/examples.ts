// The minimal specs the catalogue's examples are written in: each construct's example is a fragment merged
// into one base document, so that its detector's test and its refusal's test read the same spec.
import type { Json, JsonObject } from '../openapi/dereference.js';

export const baseSpec: JsonObject = {
  openapi: '3.1.0',
  info: { title: 'Example', version: '1.0.0' },
  servers: [{ url: 'http://localhost/v1' }],
  paths: {},
};

/** The base document with the example's top-level members in place of the base's. */
export const exampleSpec = (fragment: JsonObject): JsonObject => ({ ...baseSpec, ...fragment });

export const ok: JsonObject = { description: 'OK' };

export const jsonContent = (schema: Json): JsonObject => ({ content: { 'application/json': { schema } } });

/** One operation (`example`) at `path`, answering 200 unless `operation` says otherwise. */
export function operationExample(operation: JsonObject, method = 'get', path = '/things'): JsonObject {
  return { paths: { [path]: { [method]: { operationId: 'example', responses: { '200': ok }, ...operation } } } };
}

/** A POST whose required body has these media types. */
export const bodyExample = (content: JsonObject): JsonObject =>
  operationExample({ requestBody: { required: true, content } }, 'post');

/** A GET answering this schema as JSON. */
export const schemaExample = (schema: Json): JsonObject =>
  operationExample({ responses: { '200': { description: 'OK', ...jsonContent(schema) } } });

/** A GET with one parameter (a path parameter's path is /things/{id}). */
export function parameterExample(parameter: JsonObject): JsonObject {
  const path = parameter['in'] === 'path' ? `/things/{${String(parameter['name'])}}` : '/things';
  return operationExample({ parameters: [parameter] }, 'get', path);
}

export const stringSchema: JsonObject = { type: 'string', maxLength: 20 };
