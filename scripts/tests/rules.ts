/**
 * The rules that choose a part of npm test (scripts/tests/select.ts runs them over the suite's files).
 */
/**
 * Node.js built-ins whose behaviour a new line changes: processes, signals and exit codes (child_process,
 * cluster); the wire (Node's own HTTP parser, llhttp, and its sockets: net, http, https, tls); keys, hashes
 * and randomness (crypto); streams and compression; workers. A test file that imports one of these itself,
 * or calls the global fetch (undici, shipped with each line), tests the runtime as well as our code.
 */
export const runtimeBuiltins = [
  'child_process',
  'cluster',
  'net',
  'http',
  'https',
  'tls',
  'crypto',
  'stream',
  'stream/promises',
  'zlib',
  'worker_threads',
];

/**
 * Folders whose files judge a spec and the tools on it (the contract gate, the conformance model): they use
 * processes and fetch as tools, not as what they test, so a Node.js line cannot change their verdict.
 */
export const specJudgingFolders = ['test/contract/', 'test/conformance/'];

/** Modules that read a spec's operations: a test importing one checks every operation the spec declares. */
const specReaders =
  /from '[./]*(helpers\/methods|helpers\/specApp|helpers\/conditionalSpec|(\.\.\/)*lib\/(conformance|contract)\/[^']+|(\.\.\/)*src\/openapi\/[^']+|(\.\.\/)*src\/generated\/(routes|openapi)[^']*)(\.js|\.json)?'/;

/** Whether a test file, at path `file` holding `text`, tests what a Node.js line can change. */
export function usesRuntime(file: string, text: string): boolean {
  if (specJudgingFolders.some((folder) => file.startsWith(folder))) return false;
  const imported = runtimeBuiltins.some((name) => text.includes(`from 'node:${name}'`));
  return imported || /\bfetch\(/.test(text);
}

/** Whether a test file holding `text` reads a spec's operations (so a new operation can change it). */
export function readsSpec(text: string): boolean {
  return specReaders.test(text);
}
