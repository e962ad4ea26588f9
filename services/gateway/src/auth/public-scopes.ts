import { PUBLIC_SCOPES } from "@3ngram/rpc";

const PUBLIC = new Set<string>(PUBLIC_SCOPES);

/**
 * The scopes a caller's credential may carry onto the public surfaces: memory:read,
 * memory:write and memory:erase. Whatever else a key row or a token names (internal service scopes, anything
 * unknown) is dropped, so no credential a user holds can act as a service.
 */
export function publicScopes(scopes: readonly string[]): string[] {
  return scopes.filter((s) => PUBLIC.has(s));
}
