import type { Ajv2020, Options, ValidateFunction } from 'ajv/dist/2020.js';
import { createAjv } from './ajv.js';
import type { DeferredCompilation } from './deferredCompile.js';

/**
 * The ajv the response validators are compiled with (serialization.ts, one
 * per response schema, fused with its serializer). A response is checked by a validator that
 * stops at the first error, compiled on first use; only a response that fails
 * is checked again by an allErrors validator, whose errors are reported, so
 * the full list costs nothing while every response is valid.
 */
export function responseValidationAjv(deferred: DeferredCompilation, options: Options): Ajv2020 {
  const firstError = createAjv({ ...options, allErrors: false });
  const everyError = createAjv({ ...options, allErrors: true });
  // An Ajv2020 to its callers: everything but compile is everyError's.
  const facade = Object.create(everyError) as Ajv2020;
  facade.compile = ((schema: object) => {
    const quick = deferred.defer(() => firstError.compile(schema));
    let thorough: ValidateFunction | undefined;
    const validate = Object.assign(
      (data: unknown): boolean => {
        if (quick()(data)) return true;
        thorough ??= everyError.compile(schema);
        thorough(data);
        validate.errors = thorough.errors;
        return false;
      },
      { errors: null as ValidateFunction['errors'] },
    );
    return validate;
  }) as never;
  return facade;
}
