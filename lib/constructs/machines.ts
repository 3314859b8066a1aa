// The machines every OpenAPI construct passes through, in the order a request meets them; each says for
// each construct of the catalogue whether it handles it (with the test that proves it) or refuses it.

export const machines = {
  http: 'HTTP layer',
  handlerTypes: 'Handler types',
  client: 'Typed client',
  conformance: 'Conformance model and generators',
  verify: 'verify',
  contract: 'Contract gate and review',
  prose: 'Prose generators',
} as const;

export type MachineId = keyof typeof machines;

export const machineIds = Object.keys(machines) as MachineId[];

/** Where a machine's supported constructs are driven through it, each on a spec of its own. */
export const machineTestFile = (machine: MachineId) => `test/constructs/${machine}.test.ts`;

export type Verdict = { supported: string } | { refused: string };

export const isRefused = (verdict: Verdict): verdict is { refused: string } => 'refused' in verdict;
