import { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContract } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { getFacts } from "../domain/get-facts.js";
import { factRecord } from "../domain/records.js";
import { actorOf } from "./mappers.js";

// Bi-temporal fact reads.

export function factHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, keyof typeof factPolicies> {
  return bridgeHandlers(MemoryService, memoryContract, {
    async getFacts(input, ctx) {
      const facts = (await getFacts(deps, actorOf(ctx), input)).map(factRecord);
      return { facts, count: facts.length };
    },
  });
}

export const factPolicies = {
  getFacts: { anyScope: [SCOPES.read], tenant: true },
} satisfies Partial<Policies<typeof MemoryService>>;
