// The operations of a dereferenced contract, keyed so that the same route in two contracts meets.
import { isObject, type Json, type JsonObject } from '../openapi/dereference.js';
import { httpMethods } from '../../src/openapi/document.js';
import type { OperationRef } from './change.js';
import { pointerStep } from './text.js';

const objectAt = (value: Json | undefined): JsonObject => (isObject(value) ? value : {});

export interface Operation {
  ref: OperationRef;
  value: JsonObject;
  pointer: string;
  /** The path item's and the operation's own, the operation's winning; each with its pointer. */
  parameters: Map<string, { parameter: JsonObject; pointer: string }>;
  /** The servers the operation or else its path item names in place of the document's, and where. */
  servers: Json | undefined;
  serversPointer: string;
}

/** in + name (headers case-insensitive); a path parameter by its place in the template, so renaming it is no change. */
function parameterKey(parameter: JsonObject, path: string): string {
  const location = String(parameter['in']);
  const name = String(parameter['name']);
  if (location === 'path') {
    const names = [...path.matchAll(/\{([^}]*)\}/g)].map((match) => match[1]);
    return `path #${names.indexOf(name)}`;
  }
  return `${location} ${location === 'header' ? name.toLowerCase() : name}`;
}

/** The operations of a dereferenced document by method and path shape (/pets/{id} and /pets/{petId} are one). */
export function operationsOf(document: JsonObject): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  for (const [path, item] of Object.entries(objectAt(document['paths']))) {
    const itemPointer = `${pointerStep('paths')}${pointerStep(path)}`;
    for (const method of httpMethods) {
      const value = objectAt(item)[method];
      if (!isObject(value)) continue;
      const pointer = `${itemPointer}${pointerStep(method)}`;
      const parameters = new Map<string, { parameter: JsonObject; pointer: string }>();
      for (const [list, at] of [
        [objectAt(item)['parameters'], itemPointer],
        [value['parameters'], pointer],
      ] as const) {
        (Array.isArray(list) ? list : []).forEach((parameter, index) => {
          if (isObject(parameter))
            parameters.set(parameterKey(parameter, path), {
              parameter,
              pointer: `${at}${pointerStep('parameters')}${pointerStep(index)}`,
            });
        });
      }
      const ref = { operationId: String(value['operationId'] ?? ''), method: method.toUpperCase(), path };
      const own = value['servers'] !== undefined;
      const servers = own ? value['servers'] : objectAt(item)['servers'];
      const serversPointer = `${own || servers === undefined ? pointer : itemPointer}${pointerStep('servers')}`;
      const shape = `${ref.method} ${path.replace(/\{[^}]*\}/g, '{}')}`;
      operations.set(shape, { ref, value, pointer, parameters, servers, serversPointer });
    }
  }
  return operations;
}
