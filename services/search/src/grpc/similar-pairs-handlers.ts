import { AppError } from "@3ngram/errors";
import { SearchService } from "@3ngram/proto/search/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { searchContract } from "@3ngram/schema";
import { SIMILAR_PAIR_POLICY } from "../domain/pair-policy.js";
import { similarPairs, type SimilarPairsDeps } from "../domain/similar-pairs.js";

// The consolidation scan: internal callers only (the consolidator).

export function similarPairsHandlers(deps: SimilarPairsDeps): Pick<Handlers<typeof SearchService>, keyof typeof similarPairsPolicies> {
  return bridgeHandlers(SearchService, searchContract, {
    async similarPairs({ limit = SIMILAR_PAIR_POLICY.maxPairs }, ctx) {
      if (limit > SIMILAR_PAIR_POLICY.maxPairs) throw new AppError("invalid_input", `limit: at most ${SIMILAR_PAIR_POLICY.maxPairs}`, { field: "limit" });
      return similarPairs(deps, ctx.tenantId, { limit });
    },
  });
}

export const similarPairsPolicies = {
  similarPairs: { anyScope: [SCOPES.internalConsolidate], tenant: true },
} satisfies Partial<Policies<typeof SearchService>>;
