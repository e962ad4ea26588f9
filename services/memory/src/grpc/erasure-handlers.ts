import { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContracts } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { erase } from "../domain/erasure.js";
import { actorOf } from "./mappers.js";

// Erasure: memory:erase only, which no credential holds unless it was asked for by name.

export function erasureHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, keyof typeof erasurePolicies> {
  return bridgeHandlers(MemoryService, memoryContracts.archive, {
    erase: async (input, ctx) => erase(deps, actorOf(ctx), input),
  });
}

export const erasurePolicies = {
  erase: { anyScope: [SCOPES.erase], tenant: true },
} satisfies Partial<Policies<typeof MemoryService>>;
