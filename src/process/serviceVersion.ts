import { readFileSync } from 'node:fs';

// Written by npm run generate from openapi.yaml's info.version and contract/released/, and copied beside the
// compiled code by npm run build: the same place relative to this module in src/ and dist/.
const releaseFile = new URL('../generated/release.json', import.meta.url);

interface Release {
  version: string;
  released: boolean;
  lastRelease: string | null;
}

/** The version this build serves, and whether it is released: "1.2.0", or "1.3.0, not yet released (last release 1.2.0)"; read on call. */
export function serviceVersion(): string {
  const { version, released, lastRelease } = JSON.parse(readFileSync(releaseFile, 'utf8')) as Release;
  if (released) return version;
  return `${version}, not yet released${lastRelease === null ? '' : ` (last release ${lastRelease})`}`;
}
