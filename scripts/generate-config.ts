// npm run generate: the configuration's schema (src/configSchema.ts) compiled by ajv into standalone
// code, src/generated/configValidator.js, so that a start neither loads typebox nor compiles the schema
// (together about 100 ms of a cold start). scripts/generate-check.sh and a test fail when it is stale.
import { writeFileSync } from 'node:fs';
import { configValidatorSource } from './configValidatorSource.js';

const [out = 'src/generated/configValidator.js'] = process.argv.slice(2);
writeFileSync(out, configValidatorSource());
