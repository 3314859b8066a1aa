import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { ErrorObject } from 'ajv/dist/2020.js';
import type { DeferredCompilation } from './deferredCompile.js';
import { responseValidationAjv } from './responseAjv.js';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * A response that breaks the contract: raised by its serializer, so fastify
 * hands it to the error handler, which logs it and answers a 500 Error object.
 */
export class ResponseContractError extends Error {
  readonly statusCode = 500;
  readonly code = 'FST_RESPONSE_VALIDATION_FAILED_VALIDATION';
  constructor(readonly validation: ErrorObject[]) {
    super(validation.map((error) => `response${error.instancePath} ${error.message ?? 'is invalid'}`).join(', '));
    this.name = 'ResponseContractError';
  }
}

/**
 * fastify's own serializer factory (fast-json-stringify) with the response
 * validation fused in: one function per response schema checks the document
 * against that schema, then serializes it with the serializer compiled from
 * it. fastify picks it by status and media type, as it would the serializer,
 * so every response with a schema is checked, and none pays a hook for it.
 * Both are compiled on first use rather than at start (see DeferredCompilation).
 */
export function validatingSerializers(deferred: DeferredCompilation): SerializerFactory {
  const build = SerializerSelector();
  const ajv = responseValidationAjv(deferred, { coerceTypes: false, useDefaults: false, removeAdditional: false });
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      const serializer = deferred.defer(() => compile(route));
      const validate = ajv.compile(route.schema as object);
      return (document: unknown) => {
        if (!validate(document)) throw new ResponseContractError(validate.errors ?? []);
        return serializer()(document);
      };
    };
  };
}
