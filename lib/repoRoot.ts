import { fileURLToPath } from 'node:url';

/** The repository's root folder (with a trailing slash), from where this file stands in it. */
export const repoRoot = fileURLToPath(new URL('../', import.meta.url));
