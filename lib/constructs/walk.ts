// Where the parts of an OpenAPI document sit, as JSON pointers: the walks every detector of the catalogue
// shares, so that a construct is looked for in every place the Specification allows it.
import { isObject, type Json, type JsonObject } from '../openapi/dereference.js';

export const pointerStep = (key: string | number) => `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

export interface Located<T = JsonObject> {
  at: string;
  node: T;
}

const operationMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const objectEntries = (node: Json | undefined): [string, JsonObject][] =>
  isObject(node) ? Object.entries(node).filter((entry): entry is [string, JsonObject] => isObject(entry[1])) : [];

/** Every path item, under paths and webhooks. */
export function pathItems(document: JsonObject): Located[] {
  return ['paths', 'webhooks'].flatMap((section) =>
    objectEntries(document[section]).map(([name, node]) => ({ at: `/${section}${pointerStep(name)}`, node })),
  );
}

/** Every operation of every path item. */
export function operations(document: JsonObject): Located[] {
  return pathItems(document).flatMap((item) =>
    objectEntries(item.node)
      .filter(([method]) => operationMethods.includes(method))
      .map(([method, node]) => ({ at: `${item.at}${pointerStep(method)}`, node })),
  );
}

/** Every parameter, on path items, operations and components. */
export function parameters(document: JsonObject): Located[] {
  const holders = [...pathItems(document), ...operations(document)];
  const declared = holders.flatMap((holder) =>
    Array.isArray(holder.node['parameters'])
      ? holder.node['parameters'].flatMap((node, index) =>
          isObject(node) ? [{ at: `${holder.at}/parameters/${index}`, node }] : [],
        )
      : [],
  );
  const components = objectEntries((document['components'] as JsonObject | undefined)?.['parameters']).map(
    ([name, node]) => ({ at: `/components/parameters${pointerStep(name)}`, node }),
  );
  return [...declared, ...components];
}

/** Every response of every operation, keyed by its status (or `default`, or a range). */
export function responses(document: JsonObject): (Located & { status: string })[] {
  return operations(document).flatMap((operation) =>
    objectEntries(operation.node['responses']).map(([status, node]) => ({
      at: `${operation.at}/responses${pointerStep(status)}`,
      node,
      status,
    })),
  );
}

/** Every `content` map: request bodies, responses and content parameters. */
export function contents(document: JsonObject): Located[] {
  const bodies = operations(document).flatMap((operation) => {
    const body = operation.node['requestBody'];
    return isObject(body) && isObject(body['content'])
      ? [{ at: `${operation.at}/requestBody/content`, node: body['content'] }]
      : [];
  });
  const answers = responses(document).flatMap((response) =>
    isObject(response.node['content']) ? [{ at: `${response.at}/content`, node: response.node['content'] }] : [],
  );
  const params = parameters(document).flatMap((parameter) =>
    isObject(parameter.node['content']) ? [{ at: `${parameter.at}/content`, node: parameter.node['content'] }] : [],
  );
  return [...bodies, ...answers, ...params];
}

/** Every media type object, with its name (application/json). */
export function mediaTypes(document: JsonObject): (Located & { name: string })[] {
  return contents(document).flatMap((content) =>
    objectEntries(content.node).map(([name, node]) => ({ at: `${content.at}${pointerStep(name)}`, node, name })),
  );
}

/** Every response header object. */
export function responseHeaders(document: JsonObject): (Located & { name: string })[] {
  return responses(document).flatMap((response) =>
    objectEntries(response.node['headers']).map(([name, node]) => ({
      at: `${response.at}/headers${pointerStep(name)}`,
      node,
      name,
    })),
  );
}

const subschemaMaps = ['properties', 'patternProperties', '$defs', 'dependentSchemas'];
const subschemaLists = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const subschemas = [
  'items',
  'additionalProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'unevaluatedProperties',
  'unevaluatedItems',
];

function schemaTree(root: Located): Located[] {
  const found: Located[] = [];
  const visit = (node: Json | undefined, at: string) => {
    if (!isObject(node)) return;
    found.push({ at, node });
    for (const key of subschemaMaps)
      for (const [name, child] of objectEntries(node[key])) visit(child, `${at}/${key}${pointerStep(name)}`);
    for (const key of subschemaLists) {
      const list = node[key];
      if (Array.isArray(list)) for (const [index, child] of list.entries()) visit(child, `${at}/${key}/${index}`);
    }
    for (const key of subschemas) visit(node[key], `${at}/${key}`);
  };
  visit(root.node, root.at);
  return found;
}

/** Every schema and subschema: of parameters, headers, media types and components. */
export function schemas(document: JsonObject): Located[] {
  const withSchema = [...parameters(document), ...responseHeaders(document), ...mediaTypes(document)];
  const roots = withSchema.flatMap((holder) =>
    isObject(holder.node['schema']) ? [{ at: `${holder.at}/schema`, node: holder.node['schema'] }] : [],
  );
  const components = objectEntries((document['components'] as JsonObject | undefined)?.['schemas']).map(
    ([name, node]) => ({ at: `/components/schemas${pointerStep(name)}`, node }),
  );
  return [...roots, ...components].flatMap(schemaTree);
}

/** Every object anywhere in the document (for keywords the Specification allows in many places). */
export function everyObject(node: Json, at = ''): Located[] {
  if (Array.isArray(node)) return node.flatMap((child, index) => everyObject(child, `${at}/${index}`));
  if (!isObject(node)) return [];
  return [
    { at, node },
    ...Object.entries(node).flatMap(([key, child]) => everyObject(child, `${at}${pointerStep(key)}`)),
  ];
}
