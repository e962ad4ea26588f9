import { MaintenanceService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContracts } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { expireCommitments, listPendingEmbeddings, listTenants } from "../domain/maintenance.js";
import { storeEmbedding } from "../domain/store-embedding.js";
import { actorOf } from "./actor.js";

// MaintenanceService: the consolidator's scheduled sweeps and its embedding retries.

export function maintenanceHandlers(deps: MemoryDeps): Handlers<typeof MaintenanceService> {
  return bridgeHandlers(MaintenanceService, memoryContracts.maintenance, {
    listTenants: async (input) => ({ tenantIds: await listTenants(deps, input) }),
    listPendingEmbeddings: async (input, ctx) => ({ memoryIds: await listPendingEmbeddings(deps, actorOf(ctx), input) }),
    async expireCommitments(input, ctx) {
      const result = await expireCommitments(deps, actorOf(ctx), { dueBefore: new Date(input.dueBefore), limit: input.limit });
      return { memoryIds: result.expired, skipped: result.skipped };
    },
    storeEmbedding: async (input, ctx) => storeEmbedding(deps, actorOf(ctx), input),
  });
}

export const maintenancePolicies = {
  listTenants: { anyScope: [SCOPES.internalConsolidate], tenant: false },
  listPendingEmbeddings: { anyScope: [SCOPES.internalEmbed], tenant: true },
  expireCommitments: { anyScope: [SCOPES.internalConsolidate], tenant: true },
  storeEmbedding: { anyScope: [SCOPES.internalEmbed], tenant: true },
} satisfies Policies<typeof MaintenanceService>;
