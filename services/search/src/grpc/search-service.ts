import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { SearchService, type SearchRequest } from "@3ngram/proto/search/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { parseInput, searchInputSchema } from "@3ngram/schema";
import { search, type SearchDeps, type SearchResult } from "../domain/search.js";

export function searchHandlers(deps: SearchDeps): Pick<Handlers<typeof SearchService>, "search"> {
  return {
    async search(request, ctx) {
      const input = parseInput(searchInputSchema, searchFieldsFromProto(request));
      return toSearchResponse(await search(deps, ctx.tenantId, input));
    },
  };
}

export const searchPolicies: Pick<Policies<typeof SearchService>, "search"> = {
  search: { anyScope: [SCOPES.read], tenant: true },
};

/** proto SearchRequest → the plain object the shared zod schema validates. proto3 says "not given" with 0, "" and empty lists. */
function searchFieldsFromProto(request: SearchRequest): Record<string, unknown> {
  const iso = (ts: Timestamp | undefined) => (ts ? timestampDate(ts).toISOString() : undefined);
  const asOf = request.asOf
    ? {
        ...(request.asOf.validAt ? { validAt: iso(request.asOf.validAt) } : {}),
        ...(request.asOf.asKnownAt ? { asKnownAt: iso(request.asOf.asKnownAt) } : {}),
      }
    : undefined;
  return {
    ...(request.query !== undefined ? { query: request.query } : {}),
    ...(request.limit !== 0 ? { limit: request.limit } : {}),
    ...(request.memoryTypes.length > 0 ? { memoryTypes: request.memoryTypes } : {}),
    ...(request.scope !== undefined ? { scope: request.scope } : {}),
    ...(request.projects.length > 0 ? { projects: request.projects } : {}),
    ...(request.status !== undefined ? { status: request.status } : {}),
    ...(request.recordedAfter ? { recordedAfter: iso(request.recordedAfter) } : {}),
    ...(request.recordedBefore ? { recordedBefore: iso(request.recordedBefore) } : {}),
    ...(asOf !== undefined ? { asOf } : {}),
    ...(request.order !== "" ? { order: request.order } : {}),
    ...(request.cursor !== undefined ? { cursor: request.cursor } : {}),
    ...(request.projection !== "" ? { projection: request.projection } : {}),
  };
}

function toSearchResponse(result: SearchResult) {
  const { coverage } = result;
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
    ...(result.nextCursor !== null ? { nextCursor: result.nextCursor } : {}),
    projection: result.projection,
    coverage: {
      order: coverage.order,
      legs: coverage.legs,
      filters: {
        memoryTypes: coverage.filters.memoryTypes,
        ...(coverage.filters.scope !== null ? { scope: coverage.filters.scope } : {}),
        projects: coverage.filters.projects,
        ...(coverage.filters.status !== null ? { status: coverage.filters.status } : {}),
        ...(coverage.filters.recordedAfter ? { recordedAfter: timestampFromDate(coverage.filters.recordedAfter) } : {}),
        ...(coverage.filters.recordedBefore ? { recordedBefore: timestampFromDate(coverage.filters.recordedBefore) } : {}),
      },
      ...(coverage.appliedScope !== null ? { appliedScope: coverage.appliedScope } : {}),
      ...(coverage.asOf
        ? {
            asOf: {
              ...(coverage.asOf.validAt ? { validAt: timestampFromDate(coverage.asOf.validAt) } : {}),
              ...(coverage.asOf.asKnownAt ? { asKnownAt: timestampFromDate(coverage.asOf.asKnownAt) } : {}),
            },
          }
        : {}),
      ...(coverage.poolSize !== null ? { poolSize: coverage.poolSize } : {}),
      hasMore: coverage.hasMore,
      abstained: coverage.abstained,
      evidence: {
        ...(coverage.evidence.bestCosine !== null ? { bestCosine: coverage.evidence.bestCosine } : {}),
        anyLexical: coverage.evidence.anyLexical,
        ...(coverage.evidence.scoreGap !== null ? { scoreGap: coverage.evidence.scoreGap } : {}),
        ...(coverage.evidence.termCoverage !== null && coverage.evidence.termCoverage !== undefined ? { termCoverage: coverage.evidence.termCoverage } : {}),
      },
    },
  };
}
