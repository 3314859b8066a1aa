import { randomUUID } from 'node:crypto';
import responseValidation from '@fastify/response-validation';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import { bearerAuthHook, createKeyChecker } from './auth/authenticate.js';
import type { Config } from './config.js';
import { apiPrefix, loadSpecification, type OpenApiDocument } from './contract.js';
import type { Database } from './db/index.js';
import { buildHandlers } from './handlers/index.js';
import { createAjv } from './http/ajv.js';
import { errorHandler } from './http/errorHandler.js';
import { operationResolver } from './http/glue.js';
import { notFoundHandler } from './http/notFound.js';
import { validatorCompiler } from './http/validation.js';

export type AppConfig = Pick<Config, 'BODY_LIMIT_BYTES' | 'API_KEY_CACHE_SECONDS' | 'RESPONSE_VALIDATION' | 'LOG_LEVEL'>;

export interface AppDeps {
  db: Database;
  /** Overrides the logger built from LOG_LEVEL (tests pass false or a stream). */
  logger?: FastifyServerOptions['logger'];
}

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/;

function assertBearerOnly(spec: OpenApiDocument): void {
  for (const [name, scheme] of Object.entries(spec.components.securitySchemes)) {
    if (scheme.type !== 'http' || scheme.scheme?.toLowerCase() !== 'bearer') {
      throw new Error(`Security scheme ${name} is not HTTP bearer; the auth hook only implements bearer keys`);
    }
  }
}

/** The whole HTTP service, ready for inject() or listen(); it never listens by itself. */
export async function buildApp(config: AppConfig, deps: AppDeps): Promise<FastifyInstance> {
  const spec = loadSpecification();
  assertBearerOnly(spec);
  const app = Fastify({
    logger: deps.logger ?? { level: config.LOG_LEVEL, redact: ['req.headers.authorization'] },
    bodyLimit: config.BODY_LIMIT_BYTES,
    exposeHeadRoutes: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
    },
  });

  // Only JSON bodies are part of the contract; without this, text/plain
  // bodies would be parsed and reach routes whose schemas only cover JSON.
  app.removeContentTypeParser(['text/plain']);
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler(config.BODY_LIMIT_BYTES));
  app.setNotFoundHandler(notFoundHandler(spec));

  app.decorateRequest('apiKeyId', undefined);
  // Set on arrival rather than in onSend: error replies keep headers already
  // set, and a synchronous onRequest hook is cheaper than an async onSend one.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onRequest', bearerAuthHook(createKeyChecker({ db: deps.db, cacheSeconds: config.API_KEY_CACHE_SECONDS })));

  if (config.RESPONSE_VALIDATION) {
    // Registered before the glue so its onRoute hook sees every API route.
    await app.register(responseValidation, {
      ajv: createAjv({ coerceTypes: false, useDefaults: false, removeAdditional: false, allErrors: true }),
    });
  }
  await app.register(openapiGlue, {
    specification: spec,
    prefix: apiPrefix,
    operationResolver: operationResolver(spec, buildHandlers({ db: deps.db })),
  });
  return app;
}
