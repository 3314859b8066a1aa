import { fileURLToPath } from 'node:url';

// This module sits at src/openapi/ (dist/openapi/ once compiled), so the
// repository root is two levels up in both cases.
const root = new URL('../../', import.meta.url);

/** openapi.yaml, the contract. */
export const specPath = fileURLToPath(new URL('openapi.yaml', root));
/** pets.arazzo.yaml, the consumers' journeys over the contract (Arazzo workflows), published beside it. */
export const arazzoPath = fileURLToPath(new URL('pets.arazzo.yaml', root));
/** openapi.yaml as JSON and the API's route table, written by `npm run generate` (see openapi/document.ts). */
export const generatedSpecPath = fileURLToPath(new URL('src/generated/openapi.json', root));
export const generatedRoutesPath = fileURLToPath(new URL('src/generated/routes.json', root));
/** What the service publishes (/v1/openapi.json and .yaml): openapi.yaml without its internal servers (published.ts). */
export const publishedJsonPath = fileURLToPath(new URL('src/generated/published.json', root));
export const publishedYamlPath = fileURLToPath(new URL('src/generated/published.yaml', root));
