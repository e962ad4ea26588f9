import type { MemoryService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import type { MemoryDeps } from "../domain/deps.js";

// Bi-temporal fact reads.
type FactMethods = "getFacts";

export function factHandlers(_deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, FactMethods> {
  return {
    async getFacts() {
      throw new AppError("internal_error", "getFacts is not implemented yet");
    },
  };
}

export const factPolicies: Pick<Policies<typeof MemoryService>, FactMethods> = {
  getFacts: { anyScope: [SCOPES.read], tenant: true },
};
