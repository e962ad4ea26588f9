import type { MemoryService } from "@3ngram/proto/memory/v1";
import type { Handlers, Policies } from "@3ngram/rpc";
import type { MemoryDeps } from "../domain/deps.js";
import { apiKeyHandlers, apiKeyPolicies } from "./api-key-handlers.js";
import { coreHandlers, corePolicies } from "./core-handlers.js";
import { factHandlers, factPolicies } from "./fact-handlers.js";
import { lifecycleHandlers, lifecyclePolicies } from "./lifecycle-handlers.js";
import { oauthHandlers, oauthPolicies } from "./oauth-handlers.js";
import { orientationHandlers, orientationPolicies } from "./orientation-handlers.js";
import { proposalHandlers, proposalPolicies } from "./proposal-handlers.js";
import { resourceHandlers, resourcePolicies } from "./resource-handlers.js";
import { scopeHandlers, scopePolicies } from "./scope-handlers.js";

/** Every MemoryService RPC, grouped by area; each area module owns its handlers and scope policy. */
export function memoryHandlers(deps: MemoryDeps): Handlers<typeof MemoryService> {
  return {
    ...coreHandlers(deps),
    ...lifecycleHandlers(deps),
    ...factHandlers(deps),
    ...scopeHandlers(deps),
    ...orientationHandlers(deps),
    ...resourceHandlers(deps),
    ...proposalHandlers(deps),
    ...oauthHandlers(deps),
    ...apiKeyHandlers(deps),
  };
}

export const memoryPolicies: Policies<typeof MemoryService> = {
  ...corePolicies,
  ...lifecyclePolicies,
  ...factPolicies,
  ...scopePolicies,
  ...orientationPolicies,
  ...resourcePolicies,
  ...proposalPolicies,
  ...oauthPolicies,
  ...apiKeyPolicies,
};
