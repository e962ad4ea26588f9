/** Completion for the MCP surface's scope names (a plain read through the memory service). */

/** The most completion values the protocol lets one answer carry. */
const MAX_COMPLETION_VALUES = 100;

/** Scope names starting with what the user typed (case-insensitive), in the service's order, at most 100. */
export function completeScopes(scopes: readonly string[], typed: string): string[] {
  const prefix = typed.trim().toLowerCase();
  return scopes.filter((s) => s.toLowerCase().startsWith(prefix)).slice(0, MAX_COMPLETION_VALUES);
}
