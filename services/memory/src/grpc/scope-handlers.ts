import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { MemoryService, RetrievalPolicySchema, ScopeSchema } from "@3ngram/proto/memory/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { MAX_EXCERPT_LENGTH, configureScopeInputSchema, listMemoriesInputSchema, parseInput, type ConfigureScopeInput } from "@3ngram/schema";
import type { RetrievalPolicyRow, ScopeRow } from "../db/scopes.js";
import type { MemoryDeps } from "../domain/deps.js";
import { getFacets } from "../domain/facets.js";
import { listMemories } from "../domain/list-memories.js";
import { createScope, deleteScope, listScopes, renameScope, setRetrievalDefault, setScopeAliases, setScopeMappings } from "../domain/scopes.js";
import { actorOf, isoFromTimestamp, toProtoMemory } from "./mappers.js";

// The scope registry, the retrieval default, and scope-aware listing and facets.
type ScopeMethods =
  "listScopes" | "createScope" | "renameScope" | "setScopeAliases" | "setScopeMappings" | "deleteScope" | "setRetrievalDefault" | "listMemories" | "getFacets";

/** Validates a registry request with the configure_scope schema, so every surface applies the same rules. */
function scopeAction<A extends ConfigureScopeInput["action"]>(action: A, fields: Record<string, unknown>): Extract<ConfigureScopeInput, { action: A }> {
  return parseInput(configureScopeInputSchema, { action, ...fields }) as Extract<ConfigureScopeInput, { action: A }>;
}

export function scopeHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, ScopeMethods> {
  return {
    async listScopes(_request, ctx) {
      const registry = await listScopes(deps, actorOf(ctx));
      return { scopes: registry.scopes.map(toProtoScope), policy: toProtoPolicy(registry.policy) };
    },
    async createScope(request, ctx) {
      const input = scopeAction("create", { name: request.name, aliases: request.aliases });
      return { scope: toProtoScope(await createScope(deps, actorOf(ctx), input)) };
    },
    async renameScope(request, ctx) {
      const input = scopeAction("rename", { name: request.name, newName: request.newName });
      return { scope: toProtoScope(await renameScope(deps, actorOf(ctx), input)) };
    },
    async setScopeAliases(request, ctx) {
      const input = scopeAction("set_aliases", { name: request.name, aliases: request.aliases });
      return { scope: toProtoScope(await setScopeAliases(deps, actorOf(ctx), input)) };
    },
    async setScopeMappings(request, ctx) {
      const input = scopeAction("set_mappings", { name: request.name, projects: request.projects });
      return { scope: toProtoScope(await setScopeMappings(deps, actorOf(ctx), input)) };
    },
    async deleteScope(request, ctx) {
      const input = scopeAction("delete", { name: request.name });
      const deleted = await deleteScope(deps, actorOf(ctx), input);
      return { name: deleted.name, policy: toProtoPolicy(deleted.policy) };
    },
    async setRetrievalDefault(request, ctx) {
      const input = scopeAction("set_retrieval_default", { mode: request.mode, ...(request.scope !== undefined ? { scope: request.scope } : {}) });
      return { policy: toProtoPolicy(await setRetrievalDefault(deps, actorOf(ctx), input)) };
    },
    async listMemories(request, ctx) {
      const input = parseInput(listMemoriesInputSchema, {
        ...(request.memoryTypes.length > 0 ? { memoryTypes: request.memoryTypes } : {}),
        ...(request.scope !== undefined ? { scope: request.scope } : {}),
        ...(request.projects.length > 0 ? { project: request.projects } : {}),
        ...(request.status !== undefined ? { status: request.status } : {}),
        ...(request.recordedAfter ? { recordedAfter: isoFromTimestamp(request.recordedAfter) } : {}),
        ...(request.recordedBefore ? { recordedBefore: isoFromTimestamp(request.recordedBefore) } : {}),
        // proto3 has no "absent" for numbers: 0 means the default.
        ...(request.limit !== 0 ? { limit: request.limit } : {}),
        offset: request.offset,
      });
      const page = await listMemories(deps, actorOf(ctx), input);
      return { memories: page.memories.map((m) => toProtoMemory(m, MAX_EXCERPT_LENGTH)), total: page.total };
    },
    async getFacets(_request, ctx) {
      return getFacets(deps, actorOf(ctx));
    },
  };
}

export function toProtoScope(row: ScopeRow): MessageInitShape<typeof ScopeSchema> {
  return { id: row.id, name: row.name, aliases: row.aliases, projects: row.projects, createdAt: timestampFromDate(row.createdAt) };
}

export function toProtoPolicy(row: RetrievalPolicyRow): MessageInitShape<typeof RetrievalPolicySchema> {
  return { mode: row.mode, ...(row.scope !== null ? { scope: row.scope } : {}) };
}

export const scopePolicies: Pick<Policies<typeof MemoryService>, ScopeMethods> = {
  listScopes: { anyScope: [SCOPES.read], tenant: true },
  createScope: { anyScope: [SCOPES.write], tenant: true },
  renameScope: { anyScope: [SCOPES.write], tenant: true },
  setScopeAliases: { anyScope: [SCOPES.write], tenant: true },
  setScopeMappings: { anyScope: [SCOPES.write], tenant: true },
  deleteScope: { anyScope: [SCOPES.write], tenant: true },
  setRetrievalDefault: { anyScope: [SCOPES.write], tenant: true },
  listMemories: { anyScope: [SCOPES.read], tenant: true },
  getFacets: { anyScope: [SCOPES.read], tenant: true },
};
