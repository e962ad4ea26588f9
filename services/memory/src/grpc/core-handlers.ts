import { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContract } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { getMemories } from "../domain/get-memories.js";
import { memoryRecord, writtenRecord } from "../domain/records.js";
import { remember } from "../domain/remember.js";
import { storeEmbedding } from "../domain/store-embedding.js";
import { resolveApiKey } from "../domain/tenants.js";
import { actorOf } from "./mappers.js";

export function coreHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, keyof typeof corePolicies> {
  return bridgeHandlers(MemoryService, memoryContract, {
    async remember(input, ctx) {
      const result = await remember(deps, actorOf(ctx), input);
      return { ...writtenRecord(result), embedded: result.embedded };
    },
    async getMemories(input, ctx) {
      const result = await getMemories(deps, actorOf(ctx), input);
      const memories = result.memories.map((m) => memoryRecord(m, input.maxContentChars));
      return { memories, count: memories.length, notFound: result.notFound };
    },
    storeEmbedding: async (input, ctx) => storeEmbedding(deps, actorOf(ctx), input),
    async resolveApiKey({ apiKey }) {
      const { tenantId, userId, scopes, keyId } = await resolveApiKey(deps.pool, deps.runtimeRole, apiKey, deps.log);
      return { tenantId, userId, scopes, keyId };
    },
  });
}

export const corePolicies = {
  remember: { anyScope: [SCOPES.write], tenant: true },
  getMemories: { anyScope: [SCOPES.read], tenant: true },
  storeEmbedding: { anyScope: [SCOPES.internalEmbed], tenant: true },
  resolveApiKey: { anyScope: [SCOPES.internalAuth], tenant: false },
} satisfies Partial<Policies<typeof MemoryService>>;
