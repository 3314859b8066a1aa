import { readFileSync } from 'node:fs';

// package.json sits two levels above this module: at the root of a checkout
// (src/process/, dist/process/) and at /app in the image, which copies it.
const packageJson = new URL('../../package.json', import.meta.url);

/** The service's release version (package.json, set by npm run contract -- release); read on call. */
export function serviceVersion(): string {
  const { version } = JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown };
  return typeof version === 'string' ? version : 'unknown';
}
