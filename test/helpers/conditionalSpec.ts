import { parse } from 'yaml';
import type { OpenApiDocument } from '../../src/openapi/document.js';

// A spec with the conditional shapes openapi.yaml may not have yet: a PUT
// that creates or replaces under a client-chosen id, a DELETE, and a GET,
// each declaring If-Match, If-None-Match and a 412 whose Error object has
// its own code. `sloppyPut` is the same PUT with a handler that forgets the
// precondition.
const conditionalParameters = `
        - { $ref: '#/components/parameters/ThingId' }
        - { name: If-Match, in: header, required: false, schema: { type: string, maxLength: 2048 } }
        - { name: If-None-Match, in: header, required: false, schema: { type: string, maxLength: 2048 } }`;

const put = (operationId: string) => `
      operationId: ${operationId}
      parameters:${conditionalParameters}
      requestBody:
        required: true
        content: { application/json: { schema: { $ref: '#/components/schemas/NewThing' } } }
      responses:
        '200': { $ref: '#/components/responses/Thing' }
        '201': { $ref: '#/components/responses/Thing' }
        '400': { $ref: '#/components/responses/Error' }
        '412': { $ref: '#/components/responses/PreconditionFailed' }`;

export const conditionalSpec = parse(`
openapi: 3.1.0
info: { title: Things, version: 1.0.0 }
servers: [{ url: 'http://localhost/v1' }]
paths:
  /things/{thingId}:
    get:
      operationId: getThing
      parameters:${conditionalParameters}
      responses:
        '200': { $ref: '#/components/responses/Thing' }
        '304': { description: Not modified, headers: { ETag: { $ref: '#/components/headers/ETag' } } }
        '400': { $ref: '#/components/responses/Error' }
        '404': { $ref: '#/components/responses/Error' }
        '412': { $ref: '#/components/responses/PreconditionFailed' }
    put:${put('putThing')}
    delete:
      operationId: deleteThing
      parameters:${conditionalParameters}
      responses:
        '204': { description: Deleted }
        '400': { $ref: '#/components/responses/Error' }
        '404': { $ref: '#/components/responses/Error' }
        '412': { $ref: '#/components/responses/PreconditionFailed' }
  /sloppy/{thingId}:
    put:${put('sloppyPut')}
components:
  securitySchemes: {}
  parameters:
    ThingId: { name: thingId, in: path, required: true, schema: { type: string, pattern: '^[a-z]{1,20}$' } }
  headers:
    ETag: { schema: { type: string } }
  schemas:
    NewThing:
      type: object
      additionalProperties: false
      required: [name]
      properties: { name: { type: string, maxLength: 100 }, size: { type: integer, minimum: 0, maximum: 100 } }
    Thing:
      type: object
      additionalProperties: false
      required: [id, name]
      properties:
        id: { type: string }
        name: { type: string }
        size: { type: integer, minimum: 0, maximum: 100 }
    Error:
      type: object
      additionalProperties: false
      required: [code, message, status]
      properties:
        code: { type: string, enum: [invalid_request, not_found, internal_error] }
        message: { type: string }
        status: { type: integer }
    PreconditionError:
      type: object
      additionalProperties: false
      required: [code, message, status]
      properties:
        code: { type: string, enum: [precondition_failed] }
        message: { type: string }
        status: { type: integer, enum: [412] }
  responses:
    Thing:
      description: The thing
      headers: { ETag: { $ref: '#/components/headers/ETag' } }
      content: { application/json: { schema: { $ref: '#/components/schemas/Thing' } } }
    Error:
      description: An error
      content: { application/json: { schema: { $ref: '#/components/schemas/Error' } } }
    PreconditionFailed:
      description: If-Match or If-None-Match did not hold
      content: { application/json: { schema: { $ref: '#/components/schemas/PreconditionError' } } }
`) as OpenApiDocument;
