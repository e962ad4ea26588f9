import { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContract } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { getFacets } from "../domain/facets.js";
import { listMemories } from "../domain/list-memories.js";
import { memorySummary } from "../domain/records.js";
import { createScope, deleteScope, listScopes, renameScope, setRetrievalDefault, setScopeAliases, setScopeMappings } from "../domain/scopes.js";
import { actorOf } from "./mappers.js";

// The scope registry, the retrieval default, and scope-aware listing and facets. The registry
// requests are configure_scope's actions, validated by the same fields (packages/schema scopes.ts).

export function scopeHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, keyof typeof scopePolicies> {
  return bridgeHandlers(MemoryService, memoryContract, {
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
    async listMemories(input, ctx) {
      const page = await listMemories(deps, actorOf(ctx), input);
      return { memories: page.memories.map(memorySummary), count: page.memories.length, total: page.total };
    },
    getFacets: async (_input, ctx) => getFacets(deps, actorOf(ctx)),
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
  listMemories: { anyScope: [SCOPES.read], tenant: true },
  getFacets: { anyScope: [SCOPES.read], tenant: true },
} satisfies Partial<Policies<typeof MemoryService>>;
