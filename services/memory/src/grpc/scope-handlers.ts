import { ScopesService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContracts } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { createScope, deleteScope, listScopes, renameScope, setRetrievalDefault, setScopeAliases, setScopeMappings } from "../domain/scopes.js";
import { actorOf } from "./actor.js";

// ScopesService: the scope registry and the retrieval default. The requests are configure_scope's
// actions, validated by the same fields (packages/schema scopes.ts).

export function scopeHandlers(deps: MemoryDeps): Handlers<typeof ScopesService> {
  return bridgeHandlers(ScopesService, memoryContracts.scopes, {
    async listScopes(_input, ctx) {
      const registry = await listScopes(deps, actorOf(ctx));
      return { ...registry, count: registry.scopes.length };
    },
    createScope: async (input, ctx) => ({ scope: await createScope(deps, actorOf(ctx), input) }),
    renameScope: async (input, ctx) => ({ scope: await renameScope(deps, actorOf(ctx), input) }),
    setScopeAliases: async (input, ctx) => ({ scope: await setScopeAliases(deps, actorOf(ctx), input) }),
    setScopeMappings: async (input, ctx) => ({ scope: await setScopeMappings(deps, actorOf(ctx), input) }),
    deleteScope: async (input, ctx) => deleteScope(deps, actorOf(ctx), input),
    setRetrievalDefault: async (input, ctx) => ({ policy: await setRetrievalDefault(deps, actorOf(ctx), input) }),
  });
}

export const scopePolicies = {
  listScopes: { anyScope: [SCOPES.read], tenant: true },
  createScope: { anyScope: [SCOPES.write], tenant: true },
  renameScope: { anyScope: [SCOPES.write], tenant: true },
  setScopeAliases: { anyScope: [SCOPES.write], tenant: true },
  setScopeMappings: { anyScope: [SCOPES.write], tenant: true },
  deleteScope: { anyScope: [SCOPES.write], tenant: true },
  setRetrievalDefault: { anyScope: [SCOPES.write], tenant: true },
} satisfies Policies<typeof ScopesService>;
