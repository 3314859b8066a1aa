import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * True when the module at url is the program being run (node dist/x.js,
 * tsx src/x.ts, a cluster worker), false when a test imports it.
 */
export function isMainModule(url: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(url));
  } catch {
    return false;
  }
}
