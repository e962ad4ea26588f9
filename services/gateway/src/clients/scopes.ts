/**
 * The scope registry and memory listing as the gateway sees them: configure_scope's actions → the
 * registry RPCs, and the one mapping between their proto messages and the public zod shapes.
 */
import { SCOPES, type CallerIdentity, type Scope as AccessScope } from "@3ngram/rpc";
import {
  configureScopeOutputSchema,
  facetsOutputSchema,
  listMemoriesOutputSchema,
  memorySummarySchema,
  retrievalPolicySchema,
  scopeRecordSchema,
  type ConfigureScopeInput,
  type ConfigureScopeOutput,
  type FacetsOutput,
  type ListMemoriesInput,
  type ListMemoriesOutput,
  type MemorySummary,
  type RetrievalPolicy,
  type ScopeRecord,
} from "@3ngram/schema";
import { AppError } from "@3ngram/errors";
import type { GetFacetsResponse, ListMemoriesResponse, Memory, MemoryService, RetrievalPolicy as ProtoPolicy, Scope } from "@3ngram/proto/memory/v1";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { MemoryClient } from "./memory.js";
import { isoTime, isoTimeOrNull, timestampFromIso } from "./timestamps.js";

type ListMemoriesRequestInit = MessageInitShape<(typeof MemoryService)["method"]["listMemories"]["input"]>;

/** list reads the registry; every other action changes it. */
export function configureScopeAccess(input: ConfigureScopeInput): AccessScope {
  return input.action === "list" ? SCOPES.read : SCOPES.write;
}

/** Runs one configure_scope action against the registry RPCs and answers in the tool's output shape. */
export async function configureScope(memory: MemoryClient, input: ConfigureScopeInput, options: { identity: CallerIdentity }): Promise<ConfigureScopeOutput> {
  const upserted = (scope: Scope | undefined) => configureScopeOutputSchema.parse({ action: "upserted", scope: toScopeRecord(scope) });
  switch (input.action) {
    case "list": {
      const out = await memory.listScopes({}, options);
      const scopes = out.scopes.map(toScopeRecord);
      return configureScopeOutputSchema.parse({ action: "list", scopes, count: scopes.length, policy: toRetrievalPolicy(out.policy) });
    }
    case "create":
      return upserted((await memory.createScope({ name: input.name, aliases: input.aliases }, options)).scope);
    case "rename":
      return upserted((await memory.renameScope({ name: input.name, newName: input.newName }, options)).scope);
    case "set_aliases":
      return upserted((await memory.setScopeAliases({ name: input.name, aliases: input.aliases }, options)).scope);
    case "set_mappings":
      return upserted((await memory.setScopeMappings({ name: input.name, projects: input.projects }, options)).scope);
    case "delete": {
      const out = await memory.deleteScope({ name: input.name }, options);
      return configureScopeOutputSchema.parse({ action: "deleted", name: out.name, policy: toRetrievalPolicy(out.policy) });
    }
    case "set_retrieval_default": {
      const out = await memory.setRetrievalDefault({ mode: input.mode, ...(input.scope !== null ? { scope: input.scope } : {}) }, options);
      return configureScopeOutputSchema.parse({ action: "retrieval_default_set", policy: toRetrievalPolicy(out.policy) });
    }
  }
}

export function toScopeRecord(scope: Scope | undefined): ScopeRecord {
  if (scope === undefined) throw new AppError("internal_error", "memory service returned no scope");
  return scopeRecordSchema.parse({
    id: scope.id,
    name: scope.name,
    aliases: scope.aliases,
    projects: scope.projects,
    createdAt: isoTime(scope.createdAt, "created_at"),
  });
}

export function toRetrievalPolicy(policy: ProtoPolicy | undefined): RetrievalPolicy {
  if (policy === undefined) throw new AppError("internal_error", "memory service returned no retrieval policy");
  return retrievalPolicySchema.parse({ mode: policy.mode, scope: policy.scope ?? null });
}

export function toListMemoriesRequest(input: ListMemoriesInput): ListMemoriesRequestInit {
  const memoryTypes = input.memoryTypes ?? (input.type !== undefined ? [input.type] : []);
  return {
    memoryTypes,
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    projects: input.project ?? [],
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.recordedAfter !== undefined ? { recordedAfter: timestampFromIso(input.recordedAfter) } : {}),
    ...(input.recordedBefore !== undefined ? { recordedBefore: timestampFromIso(input.recordedBefore) } : {}),
    limit: input.limit,
    offset: input.offset,
  };
}

function toMemorySummary(memory: Memory): MemorySummary {
  return memorySummarySchema.parse({
    id: memory.id,
    memoryType: memory.memoryType,
    topic: memory.topic,
    scope: memory.scope,
    project: memory.project ?? null,
    status: memory.status,
    tags: memory.tags,
    recordedAt: isoTime(memory.recordedAt, "recorded_at"),
    supersededBy: memory.supersededBy ?? null,
    commitment: memory.commitment
      ? { id: memory.commitment.id, status: memory.commitment.status, dueAt: isoTimeOrNull(memory.commitment.dueAt), owner: memory.commitment.owner ?? null }
      : null,
  });
}

export function toListMemoriesOutput(response: ListMemoriesResponse): ListMemoriesOutput {
  const memories = response.memories.map(toMemorySummary);
  return listMemoriesOutputSchema.parse({ memories, count: memories.length, total: response.total });
}

export function toFacetsOutput(response: GetFacetsResponse): FacetsOutput {
  return facetsOutputSchema.parse({ scopes: response.scopes, projects: response.projects });
}
