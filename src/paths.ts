import { fileURLToPath } from 'node:url';

// This module sits directly under src/ (and dist/ once compiled), so the
// repository root is one level up in both cases.
const root = new URL('../', import.meta.url);

export const specPath = fileURLToPath(new URL('openapi.yaml', root));
export const migrationsDir = fileURLToPath(new URL('migrations/', root));
