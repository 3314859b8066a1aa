// npm run generate: the configuration's schema (src/config/schema.ts) compiled by ajv into standalone
// code, src/generated/configValidator.js, so that a start neither loads typebox nor compiles the schema
// (together about 100 ms of a cold start); and its reference, docs/configuration.md, made from the
// schema's own descriptions. scripts/generate-check.sh and tests fail when either is stale.
import { writeFileSync } from 'node:fs';
import { configReferenceMarkdown } from './configReference.js';
import { configValidatorSource } from './configValidatorSource.js';

const [validatorOut = 'src/generated/configValidator.js', referenceOut = 'docs/configuration.md'] =
  process.argv.slice(2);
writeFileSync(validatorOut, configValidatorSource());
writeFileSync(referenceOut, configReferenceMarkdown());
