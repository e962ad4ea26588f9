import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { SearchService } from "@3ngram/proto/search/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { parseInput, searchInputSchema } from "@3ngram/schema";
import { search, type SearchDeps } from "../domain/search.js";

export function searchHandlers(deps: SearchDeps): Handlers<typeof SearchService> {
  return {
    async search(request, ctx) {
      // proto3 cannot say "absent" for scalars: 0 and empty lists mean "not given".
      const input = parseInput(searchInputSchema, {
        query: request.query,
        ...(request.limit !== 0 ? { limit: request.limit } : {}),
        ...(request.memoryTypes.length > 0 ? { memoryTypes: request.memoryTypes } : {}),
        ...(request.scope !== undefined ? { scope: request.scope } : {}),
        // One project for now; a list is refused by the schema rather than silently narrowed.
        ...(request.projects.length > 0 ? { project: request.projects.length === 1 ? request.projects[0] : request.projects } : {}),
        ...(request.status !== undefined ? { status: request.status } : {}),
      });
      const result = await search(deps, ctx.tenantId, input);
      return {
        hits: result.hits.map((h) => ({
          id: h.id,
          memoryType: h.memoryType,
          topic: h.topic,
          excerpt: h.excerpt,
          contentLength: h.contentLength,
          truncated: h.truncated,
          score: h.score,
          scope: h.scope,
          ...(h.project !== null ? { project: h.project } : {}),
          recordedAt: timestampFromDate(h.recordedAt),
        })),
        hasMore: result.hasMore,
        coverage: result.coverage,
      };
    },
  };
}

export const searchPolicies: Policies<typeof SearchService> = {
  search: { anyScope: [SCOPES.read], tenant: true },
};
