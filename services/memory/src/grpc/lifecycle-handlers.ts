import { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { MAX_CONTENT_LENGTH, memoryContract } from "@3ngram/schema";
import { archive } from "../domain/archive.js";
import type { MemoryDeps } from "../domain/deps.js";
import { getHistory } from "../domain/history.js";
import { memoryRecord, writtenRecord } from "../domain/records.js";
import { resolve } from "../domain/resolve.js";
import { revise } from "../domain/revise.js";
import { actorOf } from "./mappers.js";

// Supersession, the commitment state machine, archive and history.

/** History shows each lineage member whole as a tool wrote it; longer imported text is cut. */
const HISTORY_CONTENT_CHARS = MAX_CONTENT_LENGTH;

export function lifecycleHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, keyof typeof lifecyclePolicies> {
  return bridgeHandlers(MemoryService, memoryContract, {
    async revise(input, ctx) {
      const result = await revise(deps, actorOf(ctx), input);
      return { ...writtenRecord(result), embedded: result.embedded, predecessorId: result.predecessorId, edgeIntent: result.edgeIntent };
    },
    resolve: async (input, ctx) => resolve(deps, actorOf(ctx), input),
    archive: async (input, ctx) => archive(deps, actorOf(ctx), input),
    async getHistory(input, ctx) {
      const history = await getHistory(deps, actorOf(ctx), input);
      return {
        memoryId: history.memoryId,
        lifecycleState: history.lifecycleState,
        lineage: history.lineage.map((m) => memoryRecord(m, HISTORY_CONTENT_CHARS)),
        edges: history.edges.map((e) => ({ ...e, recordedAt: e.recordedAt.toISOString() })),
        events: history.events.map(({ id: _id, createdAt, ...e }) => ({ ...e, createdAt: createdAt.toISOString() })),
      };
    },
  });
}

export const lifecyclePolicies = {
  revise: { anyScope: [SCOPES.write], tenant: true },
  resolve: { anyScope: [SCOPES.write], tenant: true },
  archive: { anyScope: [SCOPES.write], tenant: true },
  getHistory: { anyScope: [SCOPES.read], tenant: true },
} satisfies Partial<Policies<typeof MemoryService>>;
