import { AppError } from "@3ngram/errors";
import type { Queryable } from "@3ngram/db";
import type { EffectiveSelector, Selector } from "@3ngram/schema";
import type { SelectorFilter } from "../db/briefing.js";
import { resolveReadScopes, selectRetrievalPolicy, selectScopes } from "../db/scopes.js";

/** Registered scope names quoted in a `require` refusal, at most. */
const MAX_NAMED_SCOPES = 8;

export interface ResolvedSelector {
  /** The selector as it was applied (`all` narrowed to a scope under a `default` retrieval policy). */
  effective: EffectiveSelector;
  /** The scope the retrieval default substituted for `all`, if it did. */
  appliedScope: string | undefined;
  filter: SelectorFilter;
}

/**
 * Turns an orientation selector into the rows it covers, applying the tenant's retrieval default
 * to `all`: `off` leaves it whole, `default` narrows it to the default scope (and says so), and
 * `require` refuses it. An explicit scope, project or scope_project selector is never changed.
 * Scope names resolve through the registry, so an alias or a renamed scope's old name matches
 * memories stored under any of the scope's names.
 */
export async function resolveSelector(db: Queryable, tenantId: string, selector: Selector): Promise<ResolvedSelector> {
  if (selector.kind === "all") {
    const policy = await selectRetrievalPolicy(db, tenantId);
    if (policy.mode === "require") throw await scopeRequired(db, tenantId);
    if (policy.mode === "default" && policy.scope !== null) {
      return {
        effective: { kind: "scope", scope: policy.scope },
        appliedScope: policy.scope,
        filter: { scopes: await resolveReadScopes(db, tenantId, policy.scope), project: null, includeUnscoped: false },
      };
    }
    return { effective: { kind: "all" }, appliedScope: undefined, filter: { scopes: null, project: null, includeUnscoped: false } };
  }
  switch (selector.kind) {
    case "scope":
      return {
        effective: { kind: "scope", scope: selector.scope },
        appliedScope: undefined,
        filter: { scopes: await resolveReadScopes(db, tenantId, selector.scope), project: null, includeUnscoped: false },
      };
    case "project":
      return {
        effective: { kind: "project", project: selector.project },
        appliedScope: undefined,
        filter: { scopes: null, project: selector.project, includeUnscoped: false },
      };
    case "scope_project":
      return {
        effective: { kind: "scope_project", scope: selector.scope, project: selector.project, includeUnscoped: selector.includeUnscoped },
        appliedScope: undefined,
        filter: { scopes: await resolveReadScopes(db, tenantId, selector.scope), project: selector.project, includeUnscoped: selector.includeUnscoped },
      };
  }
}

/** The `require` refusal names the registered scopes the caller can pick from (a bounded list). */
async function scopeRequired(db: Queryable, tenantId: string): Promise<AppError> {
  const names = (await selectScopes(db, tenantId)).map((s) => s.name);
  const shown = names.slice(0, MAX_NAMED_SCOPES).join(", ");
  const more = names.length > MAX_NAMED_SCOPES ? ` (+${names.length - MAX_NAMED_SCOPES} more)` : "";
  const known = names.length > 0 ? `; registered scopes: ${shown}${more}` : "";
  return new AppError(
    "invalid_input",
    `selector.kind: the retrieval policy requires a scope, so "all" is refused — use kind scope, project or scope_project${known}`,
    { field: "selector.kind" },
  );
}
