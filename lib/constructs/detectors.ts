// The detectors of the catalogue: each finds where a construct appears in a spec, as JSON pointers.
import { bytes } from '../../src/openapi/mediaTypes.js';
import { isObject, type Json, type JsonObject } from '../openapi/dereference.js';
import {
  everyObject,
  mediaTypes,
  operations,
  parameters,
  pathItems,
  pointerStep,
  responseHeaders,
  responses,
  schemas,
  contents,
} from './walk.js';

/** A spec as detectors read it: as written (for `$ref` siblings) and dereferenced. */
export interface SpecView {
  raw: JsonObject;
  document: JsonObject;
}

export type Detector = (spec: SpecView) => string[];

const essence = (mediaType: string) => mediaType.split(';')[0]!.trim().toLowerCase();

/** Media types whose essence (type/subtype, parameters left out) `test` accepts. */
export const mediaTypeWhere =
  (test: (essence: string) => boolean): Detector =>
  ({ document }) =>
    mediaTypes(document)
      .filter((media) => test(essence(media.name)))
      .map((media) => media.at);

export const isJson = (type: string) => type === 'application/json';
export const isJsonSuffix = (type: string) => /^application\/[^/\s]+\+json$/.test(type);
// The media types the service's own entries cover are decided there, once (src/openapi/mediaTypes.ts).
export const isBytes = (type: string) => bytes.covers(type);
export const isText = (type: string) => type.startsWith('text/');
export const isMultipart = (type: string) => type.startsWith('multipart/');
export const isForm = (type: string) => type === 'application/x-www-form-urlencoded';

/** Content maps that offer more than one media type. */
export const severalMediaTypes: Detector = ({ document }) =>
  contents(document)
    .filter((content) => Object.keys(content.node).length > 1)
    .map((content) => content.at);

/** Schemas for which `test` holds. */
export const schemaWhere =
  (test: (schema: JsonObject) => boolean): Detector =>
  ({ document }) =>
    schemas(document)
      .filter((schema) => test(schema.node))
      .map((schema) => schema.at);

/** Schemas that carry `keyword`, pointing at it. */
export const schemaKeyword =
  (keyword: string): Detector =>
  ({ document }) =>
    schemas(document)
      .filter((schema) => keyword in schema.node)
      .map((schema) => `${schema.at}${pointerStep(keyword)}`);

const defaultStyle: Record<string, string> = { path: 'simple', header: 'simple', query: 'form', cookie: 'form' };

/** How a parameter with a schema is serialized: where, in which style, exploded or not. */
export function serialization(parameter: JsonObject): { in: string; style: string; explode: boolean } {
  const where = String(parameter['in']);
  const style = typeof parameter['style'] === 'string' ? parameter['style'] : (defaultStyle[where] ?? '');
  const explode = typeof parameter['explode'] === 'boolean' ? parameter['explode'] : style === 'form';
  return { in: where, style, explode };
}

const styleKey = (parameter: JsonObject) => {
  const { in: where, style, explode } = serialization(parameter);
  return `${where} ${style}${explode ? ' explode' : ''}`;
};

/** Parameters with a schema (not `content`) serialized as one of `keys` (`query form explode`, `path label`). */
export const parameterStyle =
  (...keys: string[]): Detector =>
  ({ document }) =>
    parameters(document)
      .filter((parameter) => !('content' in parameter.node) && keys.includes(styleKey(parameter.node)))
      .map((parameter) => parameter.at);

/** Every (in, style, explode) the catalogue names by its own entry, cookies aside. */
export const namedParameterStyles = [
  'path simple',
  'path simple explode',
  'path label',
  'path label explode',
  'path matrix',
  'path matrix explode',
  'query form explode',
  'query form',
  'query spaceDelimited',
  'query spaceDelimited explode',
  'query pipeDelimited',
  'query pipeDelimited explode',
  'query deepObject',
  'query deepObject explode',
  'header simple',
  'header simple explode',
];

export const otherParameterStyle: Detector = ({ document }) =>
  parameters(document)
    .filter(
      (parameter) =>
        !('content' in parameter.node) &&
        parameter.node['in'] !== 'cookie' &&
        !namedParameterStyles.includes(styleKey(parameter.node)),
    )
    .map((parameter) => parameter.at);

export const parameterWhere =
  (test: (parameter: JsonObject) => boolean): Detector =>
  ({ document }) =>
    parameters(document)
      .filter((parameter) => test(parameter.node))
      .map((parameter) => parameter.at);

export const responseStatus =
  (test: (status: string) => boolean): Detector =>
  ({ document }) =>
    responses(document)
      .filter((response) => test(response.status))
      .map((response) => response.at);

export const responseMember =
  (member: string): Detector =>
  ({ document }) =>
    responses(document)
      .filter((response) => isObject(response.node[member]) && Object.keys(response.node[member]).length > 0)
      .map((response) => `${response.at}${pointerStep(member)}`);

export const declaredResponseHeaders: Detector = ({ document }) => responseHeaders(document).map((header) => header.at);

export const operationMember =
  (member: string, test: (value: Json) => boolean = () => true): Detector =>
  ({ document }) =>
    operations(document)
      .filter((operation) => member in operation.node && test(operation.node[member]!))
      .map((operation) => `${operation.at}${pointerStep(member)}`);

const hasServers = (value: Json | undefined) => Array.isArray(value) && value.length > 0;

export const rootServers: Detector = ({ document }) => (hasServers(document['servers']) ? ['/servers'] : []);

export const pathItemServers: Detector = ({ document }) =>
  pathItems(document)
    .filter((item) => hasServers(item.node['servers']))
    .map((item) => `${item.at}/servers`);

export const serverVariables: Detector = ({ document }) =>
  everyObject(document)
    .filter(({ at, node }) => /\/servers\/\d+$/.test(at) && isObject(node['variables']))
    .map(({ at }) => `${at}/variables`);

/** Security schemes for which `test` holds. */
export const securityScheme =
  (test: (scheme: JsonObject) => boolean): Detector =>
  ({ document }) => {
    const schemes = (document['components'] as JsonObject | undefined)?.['securitySchemes'];
    return Object.entries(isObject(schemes) ? schemes : {})
      .filter(([, scheme]) => isObject(scheme) && test(scheme))
      .map(([name]) => `/components/securitySchemes${pointerStep(name)}`);
  };

/** Every security requirement list: the root's and each operation's. */
function securityLists(document: JsonObject): { at: string; list: Json[] }[] {
  const root = Array.isArray(document['security']) ? [{ at: '/security', list: document['security'] }] : [];
  const own = operations(document).flatMap((operation) =>
    Array.isArray(operation.node['security'])
      ? [{ at: `${operation.at}/security`, list: operation.node['security'] }]
      : [],
  );
  return [...root, ...own];
}

export const scopedRequirements: Detector = ({ document }) =>
  securityLists(document).flatMap(({ at, list }) =>
    list.flatMap((requirement, index) =>
      isObject(requirement) && Object.values(requirement).some((scopes) => Array.isArray(scopes) && scopes.length > 0)
        ? [`${at}/${index}`]
        : [],
    ),
  );

export const unsecuredOperations: Detector = ({ document }) =>
  securityLists(document)
    .filter(
      ({ at, list }) =>
        at !== '/security' && (list.length === 0 || list.some((r) => isObject(r) && Object.keys(r).length === 0)),
    )
    .map(({ at }) => at);

export const alternativeRequirements: Detector = ({ document }) =>
  securityLists(document)
    .filter(({ list }) => list.length > 1 || list.some((r) => isObject(r) && Object.keys(r).length > 1))
    .map(({ at }) => at);

/** A `$ref` beside keywords that apply with its target (a Reference Object's summary and description aside). */
export const refSiblings: Detector = ({ raw }) =>
  everyObject(raw)
    .filter(
      ({ node }) =>
        typeof node['$ref'] === 'string' &&
        Object.keys(node).some((key) => !['$ref', 'summary', 'description'].includes(key)),
    )
    .map(({ at }) => at);

/** A schema that contains itself: the dereferenced document keeps such a `$ref` as a `$ref`. */
export const recursiveSchemas: Detector = ({ document }) =>
  schemas(document)
    .filter((schema) => typeof schema.node['$ref'] === 'string')
    .map((schema) => schema.at);

export const webhooks: Detector = ({ document }) =>
  isObject(document['webhooks']) && Object.keys(document['webhooks']).length > 0 ? ['/webhooks'] : [];

/**
 * Schemas that carry `contentMediaType` or `contentEncoding`: content encoded inside JSON. The schema of a
 * bytes body itself (`image/png: {schema: {type: string, contentMediaType: image/png}}`, OpenAPI 3.1's way
 * of naming raw bytes) encodes nothing and is left out.
 */
export const encodedContentInSchemas: Detector = (spec) => {
  const bytesBodies = new Set(
    mediaTypes(spec.document)
      .filter((media) => isBytes(essence(media.name)))
      .map((media) => `${media.at}/schema`),
  );
  return schemaWhere((schema) => 'contentMediaType' in schema || 'contentEncoding' in schema)(spec).filter(
    (at) => !bytesBodies.has(at),
  );
};
