/**
 * The search service as the gateway sees it: a typed gRPC client plus the single mapping between
 * its proto messages and the public zod shapes (hit content is the bounded excerpt).
 */
import { AppError } from "@3ngram/errors";
import { SearchService, type Coverage as ProtoCoverage, type SearchHit as ProtoHit, type SearchResponse } from "@3ngram/proto/search/v1";
import type { CredentialSigner, RpcClient } from "@3ngram/rpc";
import { createRpcClient } from "@3ngram/rpc";
import { coverageSchema, searchHitSchema, searchOutputSchema, type Coverage, type SearchHit, type SearchInput, type SearchOutput } from "@3ngram/schema";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { isoTime } from "./timestamps.js";

export type SearchClient = RpcClient<typeof SearchService>;

export function createSearchClient(address: string, signer: CredentialSigner): SearchClient {
  return createRpcClient(SearchService, { address, audience: "search", signer });
}

type SearchRequestInit = MessageInitShape<(typeof SearchService)["method"]["search"]["input"]>;

export function toSearchRequest(input: SearchInput): SearchRequestInit {
  const memoryTypes = input.memoryTypes ?? (input.memoryType !== undefined ? [input.memoryType] : []);
  return {
    query: input.query,
    limit: input.limit,
    memoryTypes,
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    projects: input.project !== undefined ? [input.project] : [],
    ...(input.status !== undefined ? { status: input.status } : {}),
  };
}

/** One ranked hit → the public hit. */
export function toHit(hit: ProtoHit): SearchHit {
  return searchHitSchema.parse({
    id: hit.id,
    memoryType: hit.memoryType,
    topic: hit.topic,
    content: hit.excerpt,
    contentLength: hit.contentLength,
    truncated: hit.truncated,
    score: hit.score,
    scope: hit.scope,
    project: hit.project ?? null,
    recordedAt: isoTime(hit.recordedAt, "recorded_at"),
  });
}

export function toCoverage(coverage: ProtoCoverage | undefined): Coverage {
  if (coverage === undefined) throw new AppError("internal_error", "search service returned no coverage");
  return coverageSchema.parse({
    legs: coverage.legs.map((l) => ({ leg: l.leg, available: l.available, candidates: l.candidates })),
    poolSize: coverage.poolSize,
    abstained: coverage.abstained,
  });
}

export function toSearchOutput(response: SearchResponse): SearchOutput {
  const hits = response.hits.map(toHit);
  return searchOutputSchema.parse({ hits, count: hits.length, hasMore: response.hasMore, coverage: toCoverage(response.coverage) });
}
