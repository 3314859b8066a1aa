// The types of configValidator.js, which generators/config.ts writes from src/config/schema.ts.
import type { ErrorObject } from 'ajv';

/** Validates an environment's values against the configuration schema, filling in defaults and coercing types. */
export declare const validate: ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
export default validate;
/** The names of every setting, in the schema's order. */
export declare const configNames: readonly string[];
