import type { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { DEFAULT_GET_CONTENT_CHARS, getMemoriesInputSchema, memoryIdSchema, parseInput, rememberInputSchema } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { getMemories } from "../domain/get-memories.js";
import { remember } from "../domain/remember.js";
import { storeEmbedding } from "../domain/store-embedding.js";
import { resolveApiKey } from "../domain/tenants.js";
import { actorOf, rememberFieldsFromProto, toProtoFact, toProtoMemory } from "./mappers.js";

type CoreMethods = "remember" | "getMemories" | "storeEmbedding" | "resolveApiKey";

export function coreHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, CoreMethods> {
  return {
    async remember(request, ctx) {
      const input = parseInput(rememberInputSchema, rememberFieldsFromProto(request));
      const result = await remember(deps, actorOf(ctx), input);
      return {
        memory: toProtoMemory(result.memory, DEFAULT_GET_CONTENT_CHARS),
        embedded: result.embedded,
        facts: result.facts.map(toProtoFact),
      };
    },

    async getMemories(request, ctx) {
      const input = parseInput(getMemoriesInputSchema, {
        ids: request.ids,
        ...(request.maxContentChars !== 0 ? { maxContentChars: request.maxContentChars } : {}),
      });
      const result = await getMemories(deps, actorOf(ctx), input);
      return {
        memories: result.memories.map((m) => toProtoMemory(m, input.maxContentChars)),
        notFound: result.notFound,
      };
    },

    async storeEmbedding(request, ctx) {
      const memoryId = parseInput(memoryIdSchema, request.memoryId);
      return storeEmbedding(deps, actorOf(ctx), { memoryId, model: request.model, vector: request.vector });
    },

    async resolveApiKey(request) {
      const row = await resolveApiKey(deps.pool, deps.runtimeRole, request.apiKey, deps.log);
      return { tenantId: row.tenantId, userId: row.userId, scopes: row.scopes, keyId: row.keyId };
    },
  };
}

export const corePolicies: Pick<Policies<typeof MemoryService>, CoreMethods> = {
  remember: { anyScope: [SCOPES.write], tenant: true },
  getMemories: { anyScope: [SCOPES.read], tenant: true },
  storeEmbedding: { anyScope: [SCOPES.internalEmbed], tenant: true },
  resolveApiKey: { anyScope: [SCOPES.internalAuth], tenant: false },
};
