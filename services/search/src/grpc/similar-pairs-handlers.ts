import { AppError } from "@3ngram/errors";
import type { SearchService } from "@3ngram/proto/search/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { SIMILAR_PAIR_POLICY } from "../domain/pair-policy.js";
import { similarPairs, type SimilarPairsDeps } from "../domain/similar-pairs.js";

// The consolidation scan: internal callers only (the consolidator).
type PairMethods = "similarPairs";

export function similarPairsHandlers(deps: SimilarPairsDeps): Pick<Handlers<typeof SearchService>, PairMethods> {
  return {
    async similarPairs(request, ctx) {
      // 0 is proto3's "not given": the policy's bound.
      if (request.limit > SIMILAR_PAIR_POLICY.maxPairs) {
        throw new AppError("invalid_input", `limit: at most ${SIMILAR_PAIR_POLICY.maxPairs}`, { field: "limit" });
      }
      const result = await similarPairs(deps, ctx.tenantId, { limit: request.limit === 0 ? SIMILAR_PAIR_POLICY.maxPairs : request.limit });
      return {
        pairs: result.pairs.map((p) => ({
          newerId: p.newerId,
          olderId: p.olderId,
          newerType: p.newerType,
          olderType: p.olderType,
          similarity: p.similarity,
          band: p.band,
          threshold: p.threshold,
        })),
        scanned: result.scanned,
        model: result.model,
      };
    },
  };
}

export const similarPairsPolicies: Pick<Policies<typeof SearchService>, PairMethods> = {
  similarPairs: { anyScope: [SCOPES.internalConsolidate], tenant: true },
};
