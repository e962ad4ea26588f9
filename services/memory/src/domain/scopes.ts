import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { withTenant, type PoolClient } from "@3ngram/db";
import { MAX_SCOPE_ALIASES, type RetrievalMode } from "@3ngram/schema";
import {
  deleteScopeRow,
  failPolicyClosed,
  findNameClash,
  findProjectClash,
  insertScope,
  lockScopeRegistry,
  movePolicyDefault,
  selectRetrievalPolicy,
  selectScopeByName,
  selectScopeByNameOrAlias,
  selectScopes,
  updateScope,
  upsertRetrievalPolicy,
  type RetrievalPolicyRow,
  type ScopeRow,
} from "../db/scopes.js";
import type { Actor, MemoryDeps } from "./deps.js";

/**
 * The scope registry: labels for the scopes memories are stored under, their aliases, the projects
 * mapped to them and the tenant's retrieval default. The registry never touches memory rows: a
 * renamed or deleted scope leaves every memory's scope text as it was (a rename keeps the old name
 * reachable as an alias). A name or alias is unique across all names and aliases of the tenant, and
 * a project maps to at most one scope; every write runs under a per-tenant lock so those checks hold.
 */

export interface ScopeRegistry {
  scopes: ScopeRow[];
  policy: RetrievalPolicyRow;
}

export interface DeletedScope {
  name: string;
  /** The policy after the delete: `require` if the deleted scope was the retrieval default. */
  policy: RetrievalPolicyRow;
}

export async function listScopes(deps: MemoryDeps, actor: Actor): Promise<ScopeRegistry> {
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, async (db) => ({
    scopes: await selectScopes(db, actor.tenantId),
    policy: await selectRetrievalPolicy(db, actor.tenantId),
  }));
}

export async function createScope(deps: MemoryDeps, actor: Actor, input: { name: string; aliases: readonly string[] }): Promise<ScopeRow> {
  const aliases = distinctAliases(input.name, input.aliases);
  const created = await registryWrite(deps, actor, async (db) => {
    await refuseTakenNames(db, actor.tenantId, [{ value: input.name, field: "name" }, ...asAliases(input.aliases)], null);
    return insertScope(db, { id: uuidv7(), tenantId: actor.tenantId, name: input.name, aliases });
  });
  deps.log.info({ scopeId: created.id, aliases: created.aliases.length }, "scope created");
  return created;
}

/**
 * Renames a scope. The old name becomes an alias, so memories stored under it (and filters naming
 * it) keep resolving to the scope; a `default` retrieval policy follows to the new name. The new
 * name may be one of the scope's own aliases (it is promoted and leaves the alias list).
 */
export async function renameScope(deps: MemoryDeps, actor: Actor, input: { name: string; newName: string }): Promise<ScopeRow> {
  if (input.newName === input.name) throw new AppError("invalid_input", "newName: is already the scope's name", { field: "newName" });
  const renamed = await registryWrite(deps, actor, async (db) => {
    const scope = await existingScope(db, actor.tenantId, input.name);
    await refuseTakenNames(db, actor.tenantId, [{ value: input.newName, field: "newName" }], scope.id);
    const aliases = [...scope.aliases.filter((a) => a !== input.newName), scope.name];
    if (aliases.length > MAX_SCOPE_ALIASES) {
      throw new AppError(
        "conflict",
        `renaming scope "${scope.name}" would give it ${aliases.length} aliases (the old name becomes one; at most ${MAX_SCOPE_ALIASES}): remove an alias first`,
        { field: "newName", ids: { scope: scope.id } },
      );
    }
    const row = await updateScope(db, actor.tenantId, scope.id, { name: input.newName, aliases });
    await movePolicyDefault(db, actor.tenantId, scope.name, input.newName);
    return row;
  });
  deps.log.info({ scopeId: renamed.id }, "scope renamed");
  return renamed;
}

/** Replaces a scope's aliases (the full list; an empty list removes them all). */
export async function setScopeAliases(deps: MemoryDeps, actor: Actor, input: { name: string; aliases: readonly string[] }): Promise<ScopeRow> {
  const aliases = distinctAliases(input.name, input.aliases);
  const updated = await registryWrite(deps, actor, async (db) => {
    const scope = await existingScope(db, actor.tenantId, input.name);
    await refuseTakenNames(db, actor.tenantId, asAliases(input.aliases), scope.id);
    return updateScope(db, actor.tenantId, scope.id, { aliases });
  });
  deps.log.info({ scopeId: updated.id, aliases: updated.aliases.length }, "scope aliases set");
  return updated;
}

/** Replaces the projects mapped to a scope: a write naming one of them and no scope lands here. */
export async function setScopeMappings(deps: MemoryDeps, actor: Actor, input: { name: string; projects: readonly string[] }): Promise<ScopeRow> {
  const projects = [...new Set(input.projects)];
  const updated = await registryWrite(deps, actor, async (db) => {
    const scope = await existingScope(db, actor.tenantId, input.name);
    const clash = await findProjectClash(db, actor.tenantId, projects, scope.id);
    if (clash) {
      const index = input.projects.indexOf(clash.project);
      throw new AppError("conflict", `projects.${index}: the project is already mapped to scope "${clash.scope}"`, { field: `projects.${index}` });
    }
    return updateScope(db, actor.tenantId, scope.id, { projects });
  });
  deps.log.info({ scopeId: updated.id, projects: updated.projects.length }, "scope mappings set");
  return updated;
}

/**
 * Removes a registry entry (memories keep their scope text and read as an unregistered scope).
 * Deleting the retrieval default flips the policy to `require`: fail closed, never silently widen.
 */
export async function deleteScope(deps: MemoryDeps, actor: Actor, input: { name: string }): Promise<DeletedScope> {
  const result = await registryWrite(deps, actor, async (db) => {
    const scope = await existingScope(db, actor.tenantId, input.name);
    await deleteScopeRow(db, actor.tenantId, scope.id);
    await failPolicyClosed(db, actor.tenantId, scope.name);
    return { id: scope.id, name: scope.name, policy: await selectRetrievalPolicy(db, actor.tenantId) };
  });
  deps.log.info({ scopeId: result.id, policy: result.policy.mode }, "scope deleted");
  return { name: result.name, policy: result.policy };
}

/** off and require take no scope; default needs a registered scope (by name or alias; the canonical name is stored). */
export async function setRetrievalDefault(deps: MemoryDeps, actor: Actor, input: { mode: RetrievalMode; scope: string | null }): Promise<RetrievalPolicyRow> {
  if ((input.mode === "default") !== (input.scope !== null)) {
    throw new AppError("invalid_input", "scope: mode default needs a scope; off and require take none", { field: "scope" });
  }
  const policy = await registryWrite(deps, actor, async (db) => {
    let scope: string | null = null;
    if (input.scope !== null) {
      const row = await selectScopeByNameOrAlias(db, actor.tenantId, input.scope);
      if (!row) throw new AppError("not_found", `scope: no registered scope is named "${input.scope}"`, { field: "scope" });
      scope = row.name;
    }
    return upsertRetrievalPolicy(db, actor.tenantId, { mode: input.mode, scope });
  });
  deps.log.info({ mode: policy.mode }, "retrieval default set");
  return policy;
}

function registryWrite<T>(deps: MemoryDeps, actor: Actor, fn: (db: PoolClient) => Promise<T>): Promise<T> {
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, async (db) => {
    await lockScopeRegistry(db, actor.tenantId);
    return fn(db);
  });
}

/** A scope addressed by its registered name; an alias or unknown name is not_found. */
async function existingScope(db: PoolClient, tenantId: string, name: string): Promise<ScopeRow> {
  const scope = await selectScopeByName(db, tenantId, name);
  if (scope) return scope;
  const owner = await selectScopeByNameOrAlias(db, tenantId, name);
  const hint = owner ? ` ("${name}" is an alias of "${owner.name}"; use the scope's name)` : "";
  throw new AppError("not_found", `name: no scope is named "${name}"${hint}`, { field: "name" });
}

/** Aliases without repeats; a scope's own name is not one of its aliases. */
function distinctAliases(name: string, aliases: readonly string[]): string[] {
  const distinct = [...new Set(aliases)];
  const own = distinct.indexOf(name);
  if (own >= 0) {
    const index = aliases.indexOf(name);
    throw new AppError("invalid_input", `aliases.${index}: an alias may not repeat the scope's own name`, { field: `aliases.${index}` });
  }
  return distinct;
}

/** Refuses the first requested name or alias (with the input field it came from) that another scope already uses. */
async function refuseTakenNames(
  db: PoolClient,
  tenantId: string,
  requested: ReadonlyArray<{ value: string; field: string }>,
  exceptId: string | null,
): Promise<void> {
  const clash = await findNameClash(
    db,
    tenantId,
    requested.map((r) => r.value),
    exceptId,
  );
  if (!clash) return;
  const field = requested.find((r) => r.value === clash.value)?.field ?? "name";
  const what = clash.as === "name" ? `a scope is already named "${clash.value}"` : `"${clash.value}" is already an alias of scope "${clash.scope}"`;
  throw new AppError("conflict", `${field}: ${what} (names and aliases are unique across the tenant's scopes)`, { field });
}

const asAliases = (aliases: readonly string[]) => aliases.map((value, i) => ({ value, field: `aliases.${i}` }));
