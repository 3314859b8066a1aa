/**
 * The rules that choose a part of npm test (scripts/tests/select.ts runs them over the suite's files).
 */
/**
 * Node.js built-ins whose behaviour a new line changes: processes, signals and exit codes (child_process,
 * cluster); the wire (Node's own HTTP parser, llhttp, and its sockets: net, http, https, tls); keys and hashes
 * (crypto); streams and compression; workers. A test file that uses one of these itself,
 * or calls the global fetch (undici, shipped with each line), tests the runtime as well as our code; but
 * crypto only for more than random inputs (randomInputMakers), child_process only to start Node.js (startsNode).
 * The file itself, not what it imports: nearly every test builds the app, whose modules use most of these,
 * so a rule that followed imports would choose nearly all of npm test (following only the test helpers, which
 * hash a template's name or start processes, chose 83 of its 140 files, December 2026). What the app does with them is
 * tested on a line by the files that reach it over a socket, a process or fetch, which this rule chooses.
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
 * What a test takes from node:crypto to make its inputs (a key nobody knows, a fresh name): the test judges
 * our code on those bytes, whatever made them. Hashes, HMACs and key comparisons, which a line can change,
 * are the service's own (src/auth/keys.ts, src/control/serverProof.ts, src/entityTags.ts); the chosen files
 * that call it over a socket or fetch, and npm start's first authenticated GET, run them on each line.
 */
export const randomInputMakers = ['randomBytes', 'randomUUID', 'randomInt'];

/**
 * How a test starts a Node.js process of this line (the service, a CLI, npm): its signals, exit codes and
 * stdio are the runtime's. A file that runs another program (bash, promtool) tests that program.
 */
const startsNode = /process\.execPath|'(node|npm|npx|tsx)'|\bfork\(/;

/**
 * Folders whose files judge a spec and the tools on it (the contract gate, the conformance model, the
 * catalogue of constructs and the machines' verdicts on them): they use processes and fetch as tools, not as
 * what they test, so a Node.js line cannot change their verdict.
 */
export const specJudgingFolders = ['test/contract/', 'test/conformance/', 'test/constructs/'];

/** Modules that read a spec's operations: a test importing one checks every operation the spec declares. */
const specReaders =
  /from '[./]*(helpers\/methods|helpers\/specApp|helpers\/conditionalSpec|(\.\.\/)*lib\/(conformance|contract)\/[^']+|(\.\.\/)*src\/openapi\/[^']+|(\.\.\/)*src\/generated\/(routes|openapi)[^']*)(\.js|\.json)?'/;

/**
 * The values a file imports from node:`name` ('*' for a default or namespace import); an `import type`, or a
 * `type X` in braces, is erased before the file runs.
 */
export function valuesImportedFrom(name: string, text: string): string[] {
  const statements = text.matchAll(new RegExp(`\\bimport\\s+(type\\s+)?([^;]*?)\\s+from\\s+'node:${name}'`, 'g'));
  return [...statements].flatMap(([, typeOnly, clause = '']) => {
    if (typeOnly !== undefined) return [];
    const braced = /\{([^}]*)\}/.exec(clause);
    const outside = clause
      .replace(/\{[^}]*\}/, '')
      .replace(/,/g, '')
      .trim();
    const named = (braced?.[1] ?? '')
      .split(',')
      .map((specifier) => specifier.trim())
      .filter((specifier) => specifier !== '' && !specifier.startsWith('type '))
      .map((specifier) => specifier.split(/\s+as\s+/)[0] ?? specifier);
    return outside === '' ? named : ['*', ...named];
  });
}

/**
 * Whether a test file holding `text` uses the built-in `name` for what a Node.js line can change. Of the
 * wire's built-ins a type counts too: a file that names a Socket or an AddressInfo holds a real connection or
 * listening address, made by a helper of its own (test/hostile/rawConnection.ts) or by the app's listen.
 */
function usesBuiltin(name: string, text: string): boolean {
  if (name === 'crypto') return valuesImportedFrom(name, text).some((value) => !randomInputMakers.includes(value));
  if (!text.includes(`from 'node:${name}'`)) return false;
  return name !== 'child_process' || startsNode.test(text);
}

/** Whether a test file, at path `file` holding `text`, tests what a Node.js line can change. */
export function usesRuntime(file: string, text: string): boolean {
  if (specJudgingFolders.some((folder) => file.startsWith(folder))) return false;
  return runtimeBuiltins.some((name) => usesBuiltin(name, text)) || /\bfetch\(/.test(text);
}

/** Whether a test file holding `text` reads a spec's operations (so a new operation can change it). */
export function readsSpec(text: string): boolean {
  return specReaders.test(text);
}

/** The contract gate's code: diff, levels, review, changelog, version, the released contracts. */
const gateCode = /from '(\.\.\/)+lib\/contract\/[^']+'/;

/**
 * Files that judge the tools on specs of their own, which a new operation in openapi.yaml does not change:
 * test/constructs/ runs each machine on the catalogue's example specs, and a file of test/contract/ that
 * imports the gate's code judges the gate (breaking, review, changelog, version) on fixtures, released
 * contracts, recorded pull requests or edits of the spec. On a tree with new operations the gate's verdict
 * on that spec is what counts, and the worked examples' suite has it from the gate's own steps (contract lint,
 * contract breaking, version and changelog, generate --check); the tools' claims are proven by npm test.
 * The files of test/contract/ that read the spec with the conformance model instead (its patterns, arazzo
 * steps, examples, generated prose, route schemas) judge the spec itself, and a new operation can fail them.
 */
export function judgesToolsOnOwnSpecs(file: string, text: string): boolean {
  return file.startsWith('test/constructs/') || (file.startsWith('test/contract/') && gateCode.test(text));
}

/** Whether a test file's verdict can change when operations are added to openapi.yaml (npm test -- spec-driven). */
export function specDriven(file: string, text: string): boolean {
  return readsSpec(text) && !judgesToolsOnOwnSpecs(file, text);
}
