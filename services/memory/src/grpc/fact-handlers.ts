import { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContract } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { getFacts } from "../domain/get-facts.js";
import { factRecord } from "../domain/records.js";
import { actorOf } from "./mappers.js";

// Bi-temporal fact reads.
type FactMethods = "getFacts";

export function factHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, FactMethods> {
  return bridgeHandlers(MemoryService, memoryContract, {
    async getFacts(input, ctx) {
      const facts = (await getFacts(deps, actorOf(ctx), input)).map(factRecord);
      return { facts, count: facts.length };
    },
  });
}

export const factPolicies: Pick<Policies<typeof MemoryService>, FactMethods> = {
  getFacts: { anyScope: [SCOPES.read], tenant: true },
};
