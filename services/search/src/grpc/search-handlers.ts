import { SearchService } from "@3ngram/proto/search/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { searchContract } from "@3ngram/schema";
import { search, type SearchDeps } from "../domain/search.js";

export function searchHandlers(deps: SearchDeps): Pick<Handlers<typeof SearchService>, keyof typeof searchPolicies> {
  return bridgeHandlers(SearchService, searchContract, {
    async search(input, ctx) {
      const { hits, projection, nextCursor, ...result } = await search(deps, ctx.tenantId, input);
      return {
        ...result,
        // A compact page carries each hit's id, type, topic and score only.
        hits:
          projection === "compact"
            ? hits.map(({ id, memoryType, topic, score }) => ({ id, memoryType, topic, score }))
            : hits.map((hit) => ({
                id: hit.id,
                memoryType: hit.memoryType,
                topic: hit.topic,
                content: hit.excerpt,
                contentLength: hit.contentLength,
                truncated: hit.truncated,
                score: hit.score,
                scope: hit.scope,
                project: hit.project,
                recordedAt: hit.recordedAt,
              })),
        count: hits.length,
        ...(nextCursor !== null ? { nextCursor } : {}),
        ...(result.coverage.appliedScope !== null ? { appliedScope: result.coverage.appliedScope } : {}),
      };
    },
  });
}

export const searchPolicies = {
  search: { anyScope: [SCOPES.read], tenant: true },
} satisfies Partial<Policies<typeof SearchService>>;
