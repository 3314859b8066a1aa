/**
 * What an operation asks of a key: its security requirements as the spec
 * lists them, each an array of scopes that must all be granted; any one
 * requirement met is enough (OpenAPI's "or" of "ands"). Empty: no scope asked.
 */
export type ScopeRequirements = readonly (readonly string[])[];

/**
 * The scopes to name in a refusal when the key meets none of the
 * requirements (those of the first), or undefined when the key may proceed.
 * Granted null: an unrestricted key, which holds every scope.
 */
export function missingScopes(
  granted: readonly string[] | null,
  required: ScopeRequirements,
): readonly string[] | undefined {
  if (granted === null || required.length === 0) return undefined;
  if (required.some((scopes) => scopes.every((scope) => granted.includes(scope)))) return undefined;
  return required[0];
}
