// Where the parts of an OpenAPI document sit, as JSON pointers: the walks every detector of the catalogue
// shares, so that a construct is looked for in every place the Specification allows it.
import { isObject, type Json, type JsonObject } from '../openapi/dereference.js';

export const pointerStep = (key: string | number) => `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;

export interface Located<T = JsonObject> {
  at: string;
  node: T;
}

/**
 * The walks of each document, kept while a detection runs (sharedWalks): the catalogue's detectors start from
 * the same few walks, and walking the schemas again for each detector made one detection on openapi.yaml cost
 * about 20 ms (the contract gate detects on the base and the head of every comparison). Kept for the one call
 * only: a caller may edit a document between two detections.
 */
let walksOfDocuments: WeakMap<JsonObject, Map<string, unknown>> | undefined;

/** Runs `detection` with each walk of a document done once. */
export function sharedWalks<T>(detection: () => T): T {
  if (walksOfDocuments !== undefined) return detection();
  walksOfDocuments = new WeakMap();
  try {
    return detection();
  } finally {
    walksOfDocuments = undefined;
  }
}

/** `walk` of `document`, done once while sharedWalks runs. */
function once<T>(walk: (document: JsonObject) => T): (document: JsonObject) => T {
  return (document) => {
    if (walksOfDocuments === undefined) return walk(document);
    let walks = walksOfDocuments.get(document);
    if (walks === undefined) walksOfDocuments.set(document, (walks = new Map()));
    if (!walks.has(walk.name)) walks.set(walk.name, walk(document));
    return walks.get(walk.name) as T;
  };
}

const operationMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const objectEntries = (node: Json | undefined): [string, JsonObject][] =>
  isObject(node) ? Object.entries(node).filter((entry): entry is [string, JsonObject] => isObject(entry[1])) : [];

/** Every path item, under paths and webhooks. */
export const pathItems = once(function pathItems(document: JsonObject): Located[] {
  return ['paths', 'webhooks'].flatMap((section) =>
    objectEntries(document[section]).map(([name, node]) => ({ at: `/${section}${pointerStep(name)}`, node })),
  );
});

/** Every operation of every path item. */
export const operations = once(function operations(document: JsonObject): Located[] {
  return pathItems(document).flatMap((item) =>
    objectEntries(item.node)
      .filter(([method]) => operationMethods.includes(method))
      .map(([method, node]) => ({ at: `${item.at}${pointerStep(method)}`, node })),
  );
});

/** Every parameter, on path items, operations and components. */
export const parameters = once(function parameters(document: JsonObject): Located[] {
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
});

/** Every response of every operation, keyed by its status (or `default`, or a range). */
export const responses = once(function responses(document: JsonObject): (Located & { status: string })[] {
  return operations(document).flatMap((operation) =>
    objectEntries(operation.node['responses']).map(([status, node]) => ({
      at: `${operation.at}/responses${pointerStep(status)}`,
      node,
      status,
    })),
  );
});

/** Every `content` map: request bodies, responses and content parameters. */
export const contents = once(function contents(document: JsonObject): Located[] {
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
});

/** Every media type object, with its name (application/json). */
export const mediaTypes = once(function mediaTypes(document: JsonObject): (Located & { name: string })[] {
  return contents(document).flatMap((content) =>
    objectEntries(content.node).map(([name, node]) => ({ at: `${content.at}${pointerStep(name)}`, node, name })),
  );
});

/** Every response header object. */
export const responseHeaders = once(function responseHeaders(document: JsonObject): (Located & { name: string })[] {
  return responses(document).flatMap((response) =>
    objectEntries(response.node['headers']).map(([name, node]) => ({
      at: `${response.at}/headers${pointerStep(name)}`,
      node,
      name,
    })),
  );
});

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
export const schemas = once(function schemas(document: JsonObject): Located[] {
  const withSchema = [...parameters(document), ...responseHeaders(document), ...mediaTypes(document)];
  const roots = withSchema.flatMap((holder) =>
    isObject(holder.node['schema']) ? [{ at: `${holder.at}/schema`, node: holder.node['schema'] }] : [],
  );
  const components = objectEntries((document['components'] as JsonObject | undefined)?.['schemas']).map(
    ([name, node]) => ({ at: `/components/schemas${pointerStep(name)}`, node }),
  );
  return [...roots, ...components].flatMap(schemaTree);
});

function objectsUnder(node: Json, at: string): Located[] {
  if (Array.isArray(node)) return node.flatMap((child, index) => objectsUnder(child, `${at}/${index}`));
  if (!isObject(node)) return [];
  return [
    { at, node },
    ...Object.entries(node).flatMap(([key, child]) => objectsUnder(child, `${at}${pointerStep(key)}`)),
  ];
}

/** Every object anywhere in the document (for keywords the Specification allows in many places). */
export const everyObject = once(function everyObject(document: JsonObject): Located[] {
  return objectsUnder(document, '');
});
