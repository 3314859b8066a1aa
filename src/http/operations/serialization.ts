import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { DeferredCompilation } from './deferredCompile.js';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * fastify's own serializer factory (fast-json-stringify), each response
 * schema compiled on its first use rather than at start (see DeferredCompilation).
 */
export function deferredSerializers(deferred: DeferredCompilation): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      const serializer = deferred.defer(() => compile(route));
      return (document: unknown) => serializer()(document);
    };
  };
}
