import type { MemoryService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import type { MemoryDeps } from "../domain/deps.js";

// The scope registry, the retrieval default, and scope-aware listing and facets.
type ScopeMethods = "listScopes" | "createScope" | "renameScope" | "setScopeAliases" | "setScopeMappings" | "deleteScope" | "setRetrievalDefault" | "listMemories" | "getFacets";

export function scopeHandlers(_deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, ScopeMethods> {
  return {
    async listScopes() {
      throw new AppError("internal_error", "listScopes is not implemented yet");
    },
    async createScope() {
      throw new AppError("internal_error", "createScope is not implemented yet");
    },
    async renameScope() {
      throw new AppError("internal_error", "renameScope is not implemented yet");
    },
    async setScopeAliases() {
      throw new AppError("internal_error", "setScopeAliases is not implemented yet");
    },
    async setScopeMappings() {
      throw new AppError("internal_error", "setScopeMappings is not implemented yet");
    },
    async deleteScope() {
      throw new AppError("internal_error", "deleteScope is not implemented yet");
    },
    async setRetrievalDefault() {
      throw new AppError("internal_error", "setRetrievalDefault is not implemented yet");
    },
    async listMemories() {
      throw new AppError("internal_error", "listMemories is not implemented yet");
    },
    async getFacets() {
      throw new AppError("internal_error", "getFacets is not implemented yet");
    },
  };
}

export const scopePolicies: Pick<Policies<typeof MemoryService>, ScopeMethods> = {
  listScopes: { anyScope: [SCOPES.read], tenant: true },
  createScope: { anyScope: [SCOPES.read], tenant: true },
  renameScope: { anyScope: [SCOPES.read], tenant: true },
  setScopeAliases: { anyScope: [SCOPES.read], tenant: true },
  setScopeMappings: { anyScope: [SCOPES.read], tenant: true },
  deleteScope: { anyScope: [SCOPES.read], tenant: true },
  setRetrievalDefault: { anyScope: [SCOPES.read], tenant: true },
  listMemories: { anyScope: [SCOPES.read], tenant: true },
  getFacets: { anyScope: [SCOPES.read], tenant: true },
};
