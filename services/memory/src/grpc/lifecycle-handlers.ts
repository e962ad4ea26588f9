import type { MemoryService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import type { MemoryDeps } from "../domain/deps.js";

// Supersession, the commitment state machine, archive and history.
type LifecycleMethods = "revise" | "resolve" | "archive" | "getHistory";

export function lifecycleHandlers(_deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, LifecycleMethods> {
  return {
    async revise() {
      throw new AppError("internal_error", "revise is not implemented yet");
    },
    async resolve() {
      throw new AppError("internal_error", "resolve is not implemented yet");
    },
    async archive() {
      throw new AppError("internal_error", "archive is not implemented yet");
    },
    async getHistory() {
      throw new AppError("internal_error", "getHistory is not implemented yet");
    },
  };
}

export const lifecyclePolicies: Pick<Policies<typeof MemoryService>, LifecycleMethods> = {
  revise: { anyScope: [SCOPES.read], tenant: true },
  resolve: { anyScope: [SCOPES.read], tenant: true },
  archive: { anyScope: [SCOPES.read], tenant: true },
  getHistory: { anyScope: [SCOPES.read], tenant: true },
};
