import { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContract, memoryIdSchema, parseInput } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { getMemories } from "../domain/get-memories.js";
import { memoryRecord, writtenRecord } from "../domain/records.js";
import { remember } from "../domain/remember.js";
import { storeEmbedding } from "../domain/store-embedding.js";
import { resolveApiKey } from "../domain/tenants.js";
import { actorOf } from "./mappers.js";

type CoreMethods = "remember" | "getMemories" | "storeEmbedding" | "resolveApiKey";

export function coreHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, CoreMethods> {
  return {
    ...bridgeHandlers(MemoryService, memoryContract, {
      async remember(input, ctx) {
        const result = await remember(deps, actorOf(ctx), input);
        return { ...writtenRecord(result), embedded: result.embedded };
      },
      async getMemories(input, ctx) {
        const result = await getMemories(deps, actorOf(ctx), input);
        const memories = result.memories.map((m) => memoryRecord(m, input.maxContentChars));
        return { memories, count: memories.length, notFound: result.notFound };
      },
    }),

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
